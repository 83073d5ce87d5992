// The speed check with a stand-in runtime, for the tests of rewrites no rule states (their
// timings set by the test, not measured): taso_tests only, as it runs the pipeline.
#pragma once

#include <string>
#include <utility>

#include "taso/backends/runtime_timer.h"
#include "taso/pipeline/pipeline.h"

namespace taso::testing {

// A runtime where a model with a node of library operator `op` takes `with_ms` and any
// other 1 ms; no spread: it stands in for the speed check's timings of a rewrite no rule
// states (the merged mixtures' Reshape, an Einsum kept).
class OpPricedRuntime : public RuntimeTimer {
 public:
  OpPricedRuntime(std::string op, double with_ms) : op_(std::move(op)), with_ms_(with_ms) {}
  std::string name() const override { return "stand-in"; }
  absl::StatusOr<PairTiming> Compare(const OnnxModel& a, const OnnxModel& b) override;

 private:
  double Seconds(const OnnxModel& m) const;
  std::string op_;
  double with_ms_;
};

// The analytic backend (the e-graph, substitutions only), the speed check timed by `timer`.
PipelineOptions SpeedCheckedBy(RuntimeTimer& timer);
// OptimizeModel of `model` with the shipped rules; the test fails where it fails, where
// its self-check finds a difference, or where no speed check ran.
PipelineResult OptimizedWithSpeedCheck(const OnnxModel& model, const PipelineOptions& options);

}  // namespace taso::testing
