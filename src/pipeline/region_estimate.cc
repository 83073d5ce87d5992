#include "pipeline/region_estimate.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

#include "pipeline/graph_fingerprint.h"
#include "taso/graph_regions.h"
#include "taso/status_macros.h"

namespace taso::pipeline {

namespace {

// What `cost` prices the nodes of `graph` in `region` at.
double InRegion(const Graph& graph, const std::vector<NodeId>& region, CostModel& cost) {
  double seconds = 0;
  for (NodeId n : region) seconds += cost.NodeCost(graph, n);
  return seconds;
}

// The input's time where the speed check did not time it: its price by operators, scaled
// by its region's time over the region's price by operators (the prices of small
// operators run far above their time in a model; the region says by how much here).
double InputEstimate(const Graph& input, const std::vector<NodeId>& region, double region_seconds, CostModel& cost,
                     double input_by_operators) {
  const double region_by_operators = InRegion(input, region, cost);
  if (!(region_by_operators > 0)) return input_by_operators - region_by_operators + region_seconds;
  return input_by_operators * region_seconds / region_by_operators;
}

// The input's time for a run where the speed check timed it (against the graph written,
// or, where it writes the input, against the last graph timed).
std::optional<double> InputTimed(const PipelineResult& result) {
  const auto& check = result.speed_check;
  if (!check || check->written_untimed || !(check->timing.a_seconds > 0)) return std::nullopt;
  return check->timing.a_seconds;
}

// Where the written graph computes as the input's: both priced at the input's time where
// the speed check timed it, else left at their prices by operators.
void PriceAlike(PipelineResult& result) {
  const std::optional<double> input_seconds = InputTimed(result);
  if (!input_seconds) return;
  PipelineResult::RegionEstimate& estimate = result.region_estimate.emplace();
  estimate.alike = estimate.input_timed = true;
  estimate.cost_before_by_operators = result.cost_before;
  estimate.cost_after_by_operators = result.cost_after;
  result.cost_before = result.cost_after = *input_seconds;
}

// The cache keys of the two regions' times, timed together, and of their ratio's spread
// (kept as that part of the time before, which scales with the machine's speed as times do).
struct RegionKeys {
  std::string before, after, spread;
};

RegionKeys KeysOf(const DifferingRegions& regions) {
  const std::string pair =
      absl::StrCat("region ", GraphFingerprint(regions.before), " against ", GraphFingerprint(regions.after));
  return {absl::StrCat(pair, ": before"), absl::StrCat(pair, ": after"), absl::StrCat(pair, ": spread")};
}

// A timing whose spread is wider than this is not kept for later runs (one made while the
// machine was busy, say): the next run times the regions again.
constexpr double kWidestSpreadKept = 0.05;

// The two regions' times: kept in `kept`'s cache file (with their spread; those kept
// without one, or with one too wide, are timed again), else timed by `timer` (and kept,
// unless too spread).
absl::StatusOr<PairTiming> TimeRegions(DifferingRegions& regions, int opset, MeasuredCost* kept, RuntimeTimer& timer,
                                       bool& from_cache) {
  const RegionKeys keys = KeysOf(regions);
  from_cache = false;
  if (kept != nullptr) {
    const std::optional<double> before = kept->KeptSeconds(keys.before), after = kept->KeptSeconds(keys.after),
                                spread = kept->KeptSeconds(keys.spread);
    if (before && after && spread && *before > 0 && *spread / *before <= kWidestSpreadKept) {
      from_cache = true;
      return PairTiming{.a_seconds = *before, .b_seconds = *after, .spread = *spread / *before};
    }
  }
  ASSIGN_OR_RETURN(const PairTiming timing, timer.Compare(NewOnnxModel(std::move(regions.before), opset),
                                                          NewOnnxModel(std::move(regions.after), opset)));
  if (kept != nullptr && timing.spread <= kWidestSpreadKept) {
    kept->KeepSeconds(keys.before, timing.a_seconds);
    kept->KeepSeconds(keys.after, timing.b_seconds);
    kept->KeepSeconds(keys.spread, timing.spread * timing.a_seconds);
  }
  return timing;
}

}  // namespace

void EstimateByRegions(const OnnxModel& model, const Graph& input, const Graph& written, CostModel& cost,
                       MeasuredCost* kept, RuntimeTimer& timer, PipelineResult& result) {
  absl::StatusOr<std::optional<DifferingRegions>> regions = FindDifferingRegions(input, written);
  if (!regions.ok()) return;
  if (!regions->has_value()) return PriceAlike(result);
  DifferingRegions& found = **regions;
  PipelineResult::RegionEstimate estimate;
  estimate.nodes_before = found.differing_before;
  estimate.nodes_after = found.differing_after;
  estimate.region_nodes_before = found.before.num_nodes();
  estimate.region_nodes_after = found.after.num_nodes();
  estimate.cost_before_by_operators = result.cost_before;
  estimate.cost_after_by_operators = result.cost_after;
  const std::vector<NodeId> nodes_before = found.nodes_before, nodes_after = found.nodes_after;
  const absl::StatusOr<PairTiming> timing = TimeRegions(found, model.opset, kept, timer, estimate.from_cache);
  if (!timing.ok()) return;
  estimate.timing = *timing;
  const std::optional<double> input_seconds = InputTimed(result);
  estimate.input_timed = input_seconds.has_value();
  result.cost_before =
      input_seconds ? *input_seconds : InputEstimate(input, nodes_before, timing->a_seconds, cost, result.cost_before);
  result.cost_after = std::max(0.0, result.cost_before - (timing->a_seconds - timing->b_seconds));
  result.region_estimate = std::move(estimate);
}

}  // namespace taso::pipeline
