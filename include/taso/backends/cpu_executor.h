// The cpu executor: runs a whole graph on oneDNN, each operator with the same kernel the
// cpu cost model measures (src/backends/cpu/kernels/), and an operator without one with its reference
// kernel. Weight-only subgraphs are computed once when the graph is prepared, as the cost
// model counts them free.
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "taso/backends/kernel_executor.h"
#include "taso/ir/graph.h"

namespace taso {

class CpuExecutor : public KernelExecutor {
 public:
  // Folds weight-only subgraphs, allocates every tensor computed or fed (weights are read
  // where the graph holds them, mapped or in memory) and prepares every kernel.
  static absl::StatusOr<std::unique_ptr<CpuExecutor>> Create(const Graph& graph);
  ~CpuExecutor() override;

  absl::StatusOr<TensorMap> Run(const TensorMap& inputs) override;

 protected:
  absl::Status RunOnce() override;
  std::vector<Step> Steps() const override;
  absl::Status RunOnceTimingSteps(std::vector<double>& seconds) override;

 private:
  struct Impl;
  explicit CpuExecutor(std::unique_ptr<Impl> impl);
  absl::Status RunStep(size_t i);  // the i-th step of a run
  std::unique_ptr<Impl> impl_;
};

}  // namespace taso
