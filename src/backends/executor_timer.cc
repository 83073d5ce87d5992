#include "taso/backends/executor_timer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "taso/backends/kernel_executor.h"
#include "taso/status_macros.h"

namespace taso {

namespace {

// The seed of the inputs both models run on (any fixed one: only time is compared).
constexpr uint64_t kInputSeed = 3;

}  // namespace

ExecutorTimer::ExecutorTimer(std::string backend, PairLimits limits) : backend_(std::move(backend)), limits_(limits) {}

std::string ExecutorTimer::name() const { return absl::StrCat("taso's ", backend_, " executor"); }

absl::StatusOr<PairTiming> ExecutorTimer::Compare(const OnnxModel& a, const OnnxModel& b) {
  const TensorMap inputs = RandomInputs(a.graph, kInputSeed);
  return TimeInPairs(limits_, clock_, [&](int rounds) -> absl::StatusOr<PairMedians> {
    PairMedians two;
    for (bool a_first : {true, false}) {
      ASSIGN_OR_RETURN(const auto seconds, TimeExecutorPair(backend_, a.graph, b.graph, inputs, a_first, rounds));
      two.a.push_back(seconds.first);
      two.b.push_back(seconds.second);
    }
    return two;
  });
}

}  // namespace taso
