// What the executors that run a graph on a backend's kernels (cpu: oneDNN, cuda: cuDNN
// and cuBLAS) share: running on named inputs, and timing whole runs alike, so that
// taso-opt --measure and taso-run --time treat every backend the same.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

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

  // Where a run's time goes: per operator, the nodes run, how many of them on reference
  // kernels, and the sum over those nodes of each node's median seconds over `runs` runs
  // (after two warm-up runs), slowest operator first.
  struct OperatorTime {
    std::string op;
    int nodes = 0;
    int reference = 0;
    double seconds = 0;
  };
  absl::StatusOr<std::vector<OperatorTime>> ProfileByOperator(int runs);

 protected:
  // One run on the inputs last given, finished when it returns.
  virtual absl::Status RunOnce() = 0;
  // The steps of a run in order (a node run by a kernel, or by its reference kernel), and
  // one run that writes each step's seconds; a backend that cannot time single steps
  // keeps the defaults, and ProfileByOperator says so.
  struct Step {
    std::string op;
    bool reference = false;
  };
  virtual std::vector<Step> Steps() const { return {}; }
  virtual absl::Status RunOnceTimingSteps(std::vector<double>& seconds);
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
