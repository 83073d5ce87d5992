// Two models timed against each other in pairs (a pair: one instance of each, made in
// either order, run in turn): how the pairs' medians become one PairTiming, and when more
// pairs stop paying. Shared by the runtime timers: ONNX Runtime's (ort_timer.h) and our
// executors' (executor_timer.h).
#pragma once

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "taso/backends/runtime_timer.h"

namespace taso {

// Per pair, each model's median run in seconds (equal lengths).
struct PairMedians {
  std::vector<double> a, b;
};

// PairTiming from per-pair medians (at least one pair): geometric means, and a spread of
// the mean log-ratio's 95% interval by Student's t (infinite with one pair); `runs`: the
// timed runs of each model in all.
PairTiming TimingFromPairs(const PairMedians& medians, int runs);

// When a comparison stops asking for more pairs.
struct PairLimits {
  // Timed runs of each model per pair: `first_rounds` in the first request, then as many
  // as take about half a second per pair at the times measured, at least 3 and at most
  // `max_rounds` (tiny models need many runs for a steady median).
  int first_rounds = 10;
  int max_rounds = 200;
  int first_pairs = 4;  // pairs timed before the spread is looked at
  int max_pairs = 16;
  double target_spread = 0.01;
  // Whether a comparison also stops once the ratio lies well beyond its spread from 1
  // (enough to decide which model is faster; not to price the difference).
  bool stop_when_resolved = true;
  // For all of a timer's comparisons: a comparison stops before a request that would
  // overrun it, and makes one request once it is spent.
  double seconds = 20;
};

// The time a timer's comparisons have taken.
struct TimerClock {
  double seconds_spent = 0;
  double last_request_seconds = 0;
  // Whether another request like the last would overrun `seconds`.
  bool OutOfTime(double seconds) const { return seconds_spent + last_request_seconds > seconds; }
};

// Two pairs of the models compared (one made in each order), each timed for `rounds`
// runs of each in turn.
using TwoPairs = std::function<absl::StatusOr<PairMedians>(int rounds)>;

// Asks `two_pairs` for more until `limits` say the ratio is settled, the pairs are at
// their bound or the clock's time is spent; `clock` counts the time taken.
absl::StatusOr<PairTiming> TimeInPairs(const PairLimits& limits, TimerClock& clock, const TwoPairs& two_pairs);

}  // namespace taso
