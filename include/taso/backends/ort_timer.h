// End-to-end timing of two models in ONNX Runtime through the worker (ort_worker.h):
// session pairs made in both orders, runs in turn, more pairs until the ratio is known to
// within 1% (a 2% difference resolved) or lies well beyond its spread (1.5 times a spread
// of 3% at most), a bound on the pairs is reached or the timer's time is spent
// (paired_timing.h; the time includes exporting the models).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"

#include "taso/backends/ort_worker.h"
#include "taso/backends/paired_timing.h"
#include "taso/backends/runtime_timer.h"

namespace taso {

// Models whose weights take this many bytes are compared in a worker of their own, stopped
// once they are: the worker's glibc keeps what it frees for reuse (its malloc settings,
// ort_worker.cc), so two sessions of a 2.9 GB model stayed resident in the shared worker
// for the rest of a run, beside taso-opt's own copies for the checks after the timing.
inline constexpr int64_t kOwnWorkerWeightBytes = int64_t{256} << 20;

class OrtTimer : public RuntimeTimer {
 public:
  // `threads`: ONNX Runtime's intra-op threads, 0 for its default session's.
  OrtTimer(std::shared_ptr<OrtWorker> worker, int threads, PairLimits limits = {},
           int64_t own_worker_bytes = kOwnWorkerWeightBytes);
  ~OrtTimer() override;
  OrtTimer(const OrtTimer&) = delete;
  OrtTimer& operator=(const OrtTimer&) = delete;
  std::string name() const override;
  absl::StatusOr<PairTiming> Compare(const OnnxModel& a, const OnnxModel& b) override;
  bool OutOfTime() const override;

 private:
  // The model's file: exported on its first comparison, then reused (the speed check times
  // the input against each candidate, and exporting ResNet-50 takes over a second).
  absl::StatusOr<std::string> ExportedPath(const OnnxModel& model);

  std::shared_ptr<OrtWorker> worker_;
  int threads_;
  PairLimits limits_;
  int64_t own_worker_bytes_;
  std::string dir_;  // of the exported models, made on first use, removed with the timer
  absl::flat_hash_map<uint64_t, std::string> exported_;  // by the model's hash
  TimerClock clock_;
};

}  // namespace taso
