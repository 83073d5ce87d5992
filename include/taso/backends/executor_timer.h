// End-to-end timing of two models on one of our executors (cpu: oneDNN; cuda), as
// `taso-run --executor` runs a written file: per pair, an executor of each model made in
// either order, runs of the two in turn (KernelExecutor::CompareSeconds), more pairs
// until the ratio is settled (paired_timing.h). The speed check's timer on the cpu and
// cuda targets.
#pragma once

#include <string>

#include "taso/backends/paired_timing.h"
#include "taso/backends/runtime_timer.h"

namespace taso {

class ExecutorTimer : public RuntimeTimer {
 public:
  // `backend`: "cpu" or "cuda" (MakeKernelExecutor).
  ExecutorTimer(std::string backend, PairLimits limits);
  std::string name() const override;
  // Fails where the executor cannot run a model (a node outside the operator library).
  absl::StatusOr<PairTiming> Compare(const OnnxModel& a, const OnnxModel& b) override;
  bool OutOfTime() const override { return clock_.OutOfTime(limits_.seconds); }

 private:
  std::string backend_;
  PairLimits limits_;
  TimerClock clock_;
};

}  // namespace taso
