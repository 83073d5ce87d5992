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
#include "taso/ir/executor.h"
#include "taso/ir/graph.h"

namespace taso {

class KernelExecutor {
 public:
  virtual ~KernelExecutor() = default;

  // Runs on the given inputs (by name) and returns the outputs by name.
  virtual absl::StatusOr<TensorMap> Run(const TensorMap& inputs) = 0;
  int num_kernels() const { return kernels_; }      // operators run by a backend kernel
  int num_reference() const { return reference_; }  // operators run by their reference kernel

  // Median seconds of one run on the inputs last given to Run: warm-up runs (two, and a
  // fifth of a second at least), then `runs` timed runs.
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
  // Steps() of an executor's steps, each with the `node` it runs and its `kernel` (null
  // where the reference kernel runs the node).
  template <typename ExecutorStep>
  static std::vector<Step> StepsOf(const Graph& graph, const std::vector<ExecutorStep>& steps) {
    std::vector<Step> out;
    for (const ExecutorStep& step : steps)
      out.push_back({.op = std::string(graph.node(step.node).op->name()), .reference = step.kernel == nullptr});
    return out;
  }
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

// Two graphs timed on a backend's executor on the same inputs. Where an executor's memory
// lands can make one of two executors of the same graph measurably faster than the
// other, and which one depends on the order they were made in. So each
// graph gets `pairs` executors, made in both orders in turn, each pair timed in turn
// (about `runs` runs per graph in all); a graph's time is the geometric mean over pairs
// of its medians. The outputs are the first pair's.
struct GraphComparison {
  double a_seconds = 0, b_seconds = 0;
  TensorMap a_outputs, b_outputs;
};
// One pair: an executor of each of `a` and `b`, made in the order `a_first` says, each run
// once on `inputs` (their outputs into `outputs` where given), then about `runs` runs of
// each in turn (KernelExecutor::CompareSeconds): the two medians.
absl::StatusOr<std::pair<double, double>> TimeExecutorPair(absl::string_view backend, const Graph& a, const Graph& b,
                                                           const TensorMap& inputs, bool a_first, int runs,
                                                           std::pair<TensorMap, TensorMap>* outputs = nullptr);

absl::StatusOr<GraphComparison> CompareGraphs(absl::string_view backend, const Graph& a, const Graph& b,
                                              const TensorMap& inputs, int runs, int pairs = 4);

}  // namespace taso
