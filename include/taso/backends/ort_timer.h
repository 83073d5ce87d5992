// End-to-end timing of two models in ONNX Runtime through the worker (ort_worker.h):
// session pairs made in both orders, runs in turn, more pairs until the ratio is known to
// within 1% (a 2% difference resolved) or lies well beyond its spread (1.5 times a spread
// of 3% at most), a bound on the pairs is reached or the timer's time is spent.
#pragma once

#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"

#include "taso/backends/ort_worker.h"
#include "taso/backends/paired_timing.h"
#include "taso/backends/runtime_timer.h"

namespace taso {

class OrtTimer : public RuntimeTimer {
 public:
  struct Options {
    int threads = 0;  // 0: ONNX Runtime's default, one per physical core (OrtIntraOpThreads)
    // Timed runs of each model per session pair: `first_rounds` in the first request, then
    // as many as take about half a second per pair at the times measured, at least 3 and
    // at most `max_rounds` (tiny models need many runs for a steady median).
    int first_rounds = 10;
    int max_rounds = 200;
    int first_pairs = 4;  // pairs timed before the spread is looked at
    int max_pairs = 16;
    double target_spread = 0.01;
    // Whether a comparison also stops once the ratio lies well beyond its spread from 1
    // (enough to decide which model is faster; not to price the difference).
    bool stop_when_resolved = true;
    // For all of this timer's comparisons, exporting the models included: a comparison
    // stops before a request that would overrun it, and makes one request (two pairs)
    // once it is spent.
    double seconds = 20;

    PairLimits limits() const {
      return {first_rounds, max_rounds, first_pairs, max_pairs, target_spread, stop_when_resolved, seconds};
    }
  };
  OrtTimer(std::shared_ptr<OrtWorker> worker, Options options);
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
  Options options_;
  std::string dir_;  // of the exported models, made on first use, removed with the timer
  absl::flat_hash_map<uint64_t, std::string> exported_;  // by the model's hash
  TimerClock clock_;
};

// `runs`: the timed runs of each model in all.
PairTiming TimingFromPairs(const OrtWorker::PairMedians& medians, int runs);

}  // namespace taso
