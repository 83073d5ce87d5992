// End-to-end timing of two models in ONNX Runtime through the worker (ort_worker.h):
// session pairs made in both orders, runs in turn, more pairs until the ratio is known to
// within 1% (a 2% difference resolved) or a bound on the pairs is reached.
#pragma once

#include <memory>
#include <string>

#include "taso/backends/ort_worker.h"
#include "taso/backends/runtime_timer.h"

namespace taso {

class OrtTimer : public RuntimeTimer {
 public:
  struct Options {
    int threads = 1;
    int rounds = 10;      // timed runs of each model per session pair
    int first_pairs = 4;  // pairs timed before the spread is looked at
    int max_pairs = 16;
    double target_spread = 0.01;
  };
  OrtTimer(std::shared_ptr<OrtWorker> worker, Options options);
  std::string name() const override;
  absl::StatusOr<PairTiming> Compare(const OnnxModel& a, const OnnxModel& b) override;

 private:
  std::shared_ptr<OrtWorker> worker_;
  Options options_;
};

// PairTiming from per-pair medians (equal lengths, at least one): geometric means, and a
// spread of twice the standard error of the mean log-ratio (infinite with one pair).
PairTiming TimingFromPairs(const OrtWorker::PairMedians& medians, int rounds);

}  // namespace taso
