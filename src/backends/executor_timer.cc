#include "taso/backends/executor_timer.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "taso/backends/kernel_executor.h"
#include "taso/status_macros.h"

namespace taso {

namespace {

// The seed of the inputs both models run on (any fixed one: only time is compared).
constexpr uint64_t kInputSeed = 3;

// One pair: executors of `a` and `b` made in the order `a_first` says, each run once on
// `inputs` (so that their buffers exist), then `rounds` runs of each in turn.
absl::StatusOr<std::pair<double, double>> TimePair(absl::string_view backend, const Graph& a, const Graph& b,
                                                   const TensorMap& inputs, bool a_first, int rounds) {
  std::unique_ptr<KernelExecutor> ea, eb;
  if (a_first) {
    ASSIGN_OR_RETURN(ea, MakeKernelExecutor(backend, a));
    ASSIGN_OR_RETURN(eb, MakeKernelExecutor(backend, b));
  } else {
    ASSIGN_OR_RETURN(eb, MakeKernelExecutor(backend, b));
    ASSIGN_OR_RETURN(ea, MakeKernelExecutor(backend, a));
  }
  RETURN_IF_ERROR(ea->Run(inputs).status());
  RETURN_IF_ERROR(eb->Run(inputs).status());
  return KernelExecutor::CompareSeconds(*ea, *eb, rounds);
}

}  // namespace

ExecutorTimer::ExecutorTimer(std::string backend, PairLimits limits) : backend_(std::move(backend)), limits_(limits) {}

std::string ExecutorTimer::name() const { return absl::StrCat("taso's ", backend_, " executor"); }

absl::StatusOr<PairTiming> ExecutorTimer::Compare(const OnnxModel& a, const OnnxModel& b) {
  const TensorMap inputs = RandomInputs(a.graph, kInputSeed);
  return TimeInPairs(limits_, clock_, [&](int rounds) -> absl::StatusOr<PairMedians> {
    PairMedians two;
    for (bool a_first : {true, false}) {
      ASSIGN_OR_RETURN(const auto seconds, TimePair(backend_, a.graph, b.graph, inputs, a_first, rounds));
      two.a.push_back(seconds.first);
      two.b.push_back(seconds.second);
    }
    return two;
  });
}

}  // namespace taso
