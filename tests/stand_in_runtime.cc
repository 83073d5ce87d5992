#include "stand_in_runtime.h"

#include <catch2/catch.hpp>

#include "rule_lookup.h"
#include "test_util.h"

namespace taso::testing {

absl::StatusOr<PairTiming> OpPricedRuntime::Compare(const OnnxModel& a, const OnnxModel& b) {
  return PairTiming{.a_seconds = Seconds(a), .b_seconds = Seconds(b), .pairs = 4, .runs = 40, .spread = 0};
}

double OpPricedRuntime::Seconds(const OnnxModel& m) const { return (CountOps(m.graph, op_) > 0 ? with_ms_ : 1) * 1e-3; }

PipelineOptions SpeedCheckedBy(RuntimeTimer& timer) {
  PipelineOptions options;
  options.backend = Backend::kAnalytic;
  options.search = SearchKind::kSubstitutions;
  options.engine = SearchEngine::kEGraph;
  options.verify_speed = true;
  options.timer = &timer;
  return options;
}

PipelineResult OptimizedWithSpeedCheck(const OnnxModel& model, const PipelineOptions& options) {
  absl::StatusOr<PipelineResult> r = OptimizeModel(model, ShippedRules().rules, options);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  REQUIRE(r->self_check.has_value());
  CHECK(r->self_check->mismatch.empty());
  REQUIRE(r->speed_check.has_value());
  return *std::move(r);
}

}  // namespace taso::testing
