// The speed check with a stand-in runtime, for the tests of rewrites no rule states (their
// timings set by the test, not measured): taso_tests only, as it runs the pipeline.
#pragma once

#include <functional>
#include <string>
#include <utility>

#include "taso/backends/runtime_timer.h"
#include "taso/pipeline/pipeline.h"

namespace taso::testing {

// A runtime that times a model at what `ms` says of its graph, in milliseconds; no
// spread: it stands in for the speed check's timings of rewrites no rule states.
class PricedRuntime : public RuntimeTimer {
 public:
  explicit PricedRuntime(std::function<double(const Graph&)> ms) : ms_(std::move(ms)) {}
  std::string name() const override { return "stand-in"; }
  absl::StatusOr<PairTiming> Compare(const OnnxModel& a, const OnnxModel& b) override;
  int comparisons = 0;  // made so far

 private:
  std::function<double(const Graph&)> ms_;
};

// A model with a node of library operator `op` takes `with_ms`, any other 1 ms (the
// merged mixtures' Reshape, an Einsum kept).
class OpPricedRuntime : public PricedRuntime {
 public:
  OpPricedRuntime(const std::string& op, double with_ms);
};

// The analytic backend (the e-graph, substitutions only), the speed check timed by `timer`.
PipelineOptions SpeedCheckedBy(RuntimeTimer& timer);
// OptimizeModel of `model` with the shipped rules; the test fails where it fails, where
// its self-check finds a difference, or where no speed check ran.
PipelineResult OptimizedWithSpeedCheck(const OnnxModel& model, const PipelineOptions& options);

}  // namespace taso::testing
