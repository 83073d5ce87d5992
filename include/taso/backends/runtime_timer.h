// Timing two models end to end in the runtime they are written for, against each other:
// the speed check before taso-opt writes a model (src/pipeline/speed_check.h) asks an
// implementation of this interface, so that tests can stand in for a real runtime.
#pragma once

#include <cmath>
#include <string>

#include "absl/status/statusor.h"
#include "taso/onnx/onnx_io.h"

namespace taso {

// Two models timed in turn: each one's time for a run and how far the measured ratio
// can be trusted.
struct PairTiming {
  double a_seconds = 0, b_seconds = 0;  // geometric means over session pairs of the medians
  int pairs = 0;                        // session pairs, made in both orders
  int runs = 0;                         // timed runs of each model in all
  // Half the width of the ratio's ~95% interval, relative (0.01: a ratio of 1.05 lies
  // within 1.04 to 1.06): from the spread of the per-pair ratios.
  double spread = 0;
  // Whether each session of a pair was timed alone, loaded after the other was released
  // (two at once would not fit in memory): the runs were then not in turn.
  bool sessions_apart = false;
  // a's time over b's: above 1 when b runs faster.
  double ratio() const { return b_seconds > 0 ? a_seconds / b_seconds : 1.0; }
  // Whether the two differ beyond the spread.
  bool Resolved() const { return std::abs(std::log(ratio())) > spread; }
  // Whether b runs measurably faster than a.
  bool SecondFaster() const { return ratio() > 1 && Resolved(); }
};

class RuntimeTimer {
 public:
  virtual ~RuntimeTimer() = default;
  // What is timed, for reports: "ONNX Runtime 1.30.0 (CPU, level all, 1 thread)".
  virtual std::string name() const = 0;
  virtual absl::StatusOr<PairTiming> Compare(const OnnxModel& a, const OnnxModel& b) = 0;
  // Whether the time given to this timer's comparisons is spent: a comparison asked for
  // now returns the fewest pairs it can, and callers decide without asking for more.
  virtual bool OutOfTime() const { return false; }
};

}  // namespace taso
