// What the executors that run a graph on a backend's kernels (cpu: oneDNN, cuda: cuDNN
// and cuBLAS) share: running on named inputs, and timing whole runs alike, so that
// taso-opt --measure and taso-run --time treat every backend the same.
#pragma once

#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "taso/executor.h"
#include "taso/graph.h"

namespace taso {

class KernelExecutor {
 public:
  virtual ~KernelExecutor() = default;

  // Runs on the given inputs (by name) and returns the outputs by name.
  virtual absl::StatusOr<TensorMap> Run(const TensorMap& inputs) = 0;
  int num_kernels() const { return kernels_; }      // operators run by a backend kernel
  int num_reference() const { return reference_; }  // operators run by their reference kernel

  // Median seconds of one run on the inputs last given to Run: two warm-up runs, then
  // `runs` timed runs.
  absl::StatusOr<double> MedianSeconds(int runs);
  // Median seconds of one run of each of `a` and `b` (inputs as last given), run in turn
  // so that a change in the machine's speed weighs on both alike.
  static absl::StatusOr<std::pair<double, double>> CompareSeconds(KernelExecutor& a, KernelExecutor& b, int runs);

 protected:
  // One run on the inputs last given, finished when it returns.
  virtual absl::Status RunOnce() = 0;
  void CountSteps(int kernels, int reference) {
    kernels_ = kernels;
    reference_ = reference;
  }

 private:
  absl::StatusOr<double> TimedRun();
  int kernels_ = 0, reference_ = 0;
};

// The executor of a backend, "cpu" (CpuExecutor) or "cuda" (MakeCudaExecutor).
absl::StatusOr<std::unique_ptr<KernelExecutor>> MakeKernelExecutor(absl::string_view backend, const Graph& graph);

}  // namespace taso
