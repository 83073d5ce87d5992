#include "taso/backends/executor_timer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "taso/backends/cpu_preparation.h"
#include "taso/backends/kernel_executor.h"
#include "taso/ir/status_macros.h"
#include "taso/onnx/onnx_static_copy.h"

namespace taso {

namespace {

// The seed of the inputs both models run on (any fixed one: only time is compared).
constexpr uint64_t kInputSeed = 3;

}  // namespace

ExecutorTimer::ExecutorTimer(std::string backend, PairLimits limits, CpuCost* cpu_cost)
    : backend_(std::move(backend)), limits_(limits), cpu_cost_(backend_ == "cpu" ? cpu_cost : nullptr) {}

// A graph's structure with the names of its inputs and outputs, which the structural
// hash leaves out and the runs feed and read by: two regions alike but for their names
// are not one graph to run.
std::string ExecutorTimer::Key(const Graph& graph) {
  std::string key = absl::StrCat(graph.StructuralHash());
  for (const std::vector<ValueId>* ends : {&graph.inputs(), &graph.outputs()})
    for (ValueId v : *ends) absl::StrAppend(&key, "/", graph.value(v).name);
  return key;
}

absl::StatusOr<const Graph*> ExecutorTimer::AsRun(const OnnxModel& model) {
  std::unique_ptr<Graph>& made = prepared_[Key(model.graph)];
  if (!made) {
    ASSIGN_OR_RETURN(Graph runnable, RunnableAtItsSizes(model));
    if (cpu_cost_ != nullptr) {
      ASSIGN_OR_RETURN(CpuPreparation p, PrepareForCpu(runnable, *cpu_cost_));
      runnable = std::move(p.graph);
    }
    made = std::make_unique<Graph>(std::move(runnable));
  }
  return made.get();
}

std::string ExecutorTimer::name() const { return absl::StrCat("taso's ", backend_, " executor"); }

absl::StatusOr<PairTiming> ExecutorTimer::Compare(const OnnxModel& a, const OnnxModel& b) {
  // One map for both: a region of a model reads tensors the whole model computes.
  TensorMap inputs = RandomInputs(a.graph, kInputSeed);
  inputs.merge(RandomInputs(b.graph, kInputSeed));
  ASSIGN_OR_RETURN(const Graph* a_run, AsRun(a));
  ASSIGN_OR_RETURN(const Graph* b_run, AsRun(b));
  return TimeInPairs(limits_, clock_, [&](int rounds) -> absl::StatusOr<PairMedians> {
    PairMedians two;
    for (bool a_first : {true, false}) {
      ASSIGN_OR_RETURN(const auto seconds, TimeExecutorPair(backend_, *a_run, *b_run, inputs, a_first, rounds));
      two.a.push_back(seconds.first);
      two.b.push_back(seconds.second);
    }
    return two;
  });
}

}  // namespace taso
