// Timing whole-graph runs the same way on every executor: warm-up runs, then the median
// of timed runs, two graphs in turn so that a change in the machine's speed weighs on
// both alike.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace taso::timing {

// One run; returns its seconds.
using TimedRun = std::function<absl::StatusOr<double>()>;

double Median(std::vector<double> v);
// Two warm-up runs, then the median of `runs` timed runs.
absl::StatusOr<double> MedianSeconds(const TimedRun& run, int runs);
// Median seconds of one run of a kernel, for its measured cost: two warm-up runs, then at
// least 10 runs and 10 ms, at most 200 (on a shared 2-core machine fewer runs gave
// medians off by 3x for small kernels).
absl::StatusOr<double> KernelMedianSeconds(const TimedRun& run);
// The medians of `a` and `b`, timed in turn (and in the other order every other round:
// the one run second runs faster).
absl::StatusOr<std::pair<double, double>> InTurn(const TimedRun& a, const TimedRun& b, int runs);

}  // namespace taso::timing
