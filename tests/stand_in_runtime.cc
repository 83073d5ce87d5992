#include "stand_in_runtime.h"

#include <catch2/catch.hpp>

#include "rule_lookup.h"
#include "test_util.h"

namespace taso::testing {

absl::StatusOr<PairTiming> PricedRuntime::Compare(const OnnxModel& a, const OnnxModel& b) {
  ++comparisons;
  return PairTiming{.a_seconds = ms_(a.graph) * 1e-3, .b_seconds = ms_(b.graph) * 1e-3, .pairs = 4, .runs = 40};
}

OpPricedRuntime::OpPricedRuntime(const std::string& op, double with_ms)
    : PricedRuntime([op, with_ms](const Graph& g) { return CountOps(g, op) > 0 ? with_ms : 1.0; }) {}

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
