// The cpu executor: runs a whole graph on oneDNN, each operator with the same kernel the
// cpu cost model measures (ops/cpu/), and an operator without one with its reference
// kernel. Weight-only subgraphs are computed once when the graph is prepared, as the cost
// model counts them free.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "taso/executor.h"
#include "taso/graph.h"

namespace taso {

class CpuExecutor {
 public:
  // Folds weight-only subgraphs, allocates every tensor and prepares every kernel.
  static absl::StatusOr<std::unique_ptr<CpuExecutor>> Create(const Graph& graph);
  ~CpuExecutor();

  // Runs on the given inputs (by name) and returns the outputs by name.
  absl::StatusOr<TensorMap> Run(const TensorMap& inputs);
  // Median seconds of one run on the inputs last given to Run: two warm-up runs, then
  // `runs` timed runs.
  absl::StatusOr<double> MedianSeconds(int runs);

  int num_kernels() const;    // operators run by a oneDNN kernel
  int num_reference() const;  // operators run by their reference kernel

  // Median seconds of one run of each of `a` and `b` (inputs as last given), run in turn
  // so that a change in the machine's speed weighs on both alike.
  static absl::StatusOr<std::pair<double, double>> CompareSeconds(CpuExecutor& a, CpuExecutor& b, int runs);

 private:
  struct Impl;
  explicit CpuExecutor(std::unique_ptr<Impl> impl);
  absl::Status RunOnce();
  absl::StatusOr<double> TimedRun();
  std::unique_ptr<Impl> impl_;
};

}  // namespace taso
