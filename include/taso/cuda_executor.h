// The cuda executor: runs a whole graph on the GPU, each operator with the kernel the
// cuda cost model measures (ops/cuda/: cuDNN, cuBLAS, our own), an operator without one
// with its reference kernel on the host (its inputs copied out and its outputs back).
// Weight-only subgraphs are computed once when the graph is prepared. Create fails with a
// clear error where this build has no cuda backend or no GPU can be used.
#pragma once

#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "taso/executor.h"
#include "taso/graph.h"

namespace taso {

class CudaExecutor {
 public:
  static absl::StatusOr<std::unique_ptr<CudaExecutor>> Create(const Graph& graph);
  ~CudaExecutor();

  // Runs on the given inputs (by name) and returns the outputs by name.
  absl::StatusOr<TensorMap> Run(const TensorMap& inputs);
  // Median seconds of one run on the inputs last given to Run (two warm-up runs first).
  absl::StatusOr<double> MedianSeconds(int runs);
  // Median seconds of one run of each of `a` and `b`, run in turn.
  static absl::StatusOr<std::pair<double, double>> CompareSeconds(CudaExecutor& a, CudaExecutor& b, int runs);

  int num_kernels() const;    // operators run by a GPU kernel
  int num_reference() const;  // operators run by their reference kernel on the host

  struct Impl;

 private:
  explicit CudaExecutor(std::unique_ptr<Impl> impl);
  absl::Status RunOnce();
  absl::StatusOr<double> TimedRun();
  std::unique_ptr<Impl> impl_;
};

}  // namespace taso
