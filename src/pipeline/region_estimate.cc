#include "pipeline/region_estimate.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "taso/ir/graph_regions.h"
#include "taso/ir/status_macros.h"

namespace taso::pipeline {

namespace {

// How far the regions reach around the nodes that differ. A region runs warmer alone than
// in its model, where the rest of the model runs between its turns: with the neighbours
// of the nodes that differ only, LSTM's merged input products saved 0.163 ms of a region
// timed alone, 0.11 ms in the model; three hops out, 0.115 ms. On the small models of the
// suite three hops reach most of the model. A hop is taken only while the input's region
// stays priced within kWidestRegionSeconds by operators: on large models (ResNeXt-50)
// one hop priced as well, and three made the region most of an 87 ms model, timed in
// fewer pairs and 15 s more.
constexpr int kRegionHops = 3;
constexpr double kWidestRegionSeconds = 10e-3;

// What `cost` prices the nodes of `graph` in `region` at.
double InRegion(const Graph& graph, const std::vector<NodeId>& region, CostModel& cost) {
  double seconds = 0;
  for (NodeId n : region) seconds += cost.NodeCost(graph, n);
  return seconds;
}

// Where `written` differs from `input`: one hop out, then as many more (up to
// kRegionHops) as keep the input's region within kWidestRegionSeconds by operators.
absl::StatusOr<std::optional<DifferingRegions>> RegionsToTime(const Graph& input, const Graph& written,
                                                              CostModel& cost) {
  absl::StatusOr<std::optional<DifferingRegions>> regions = FindDifferingRegions(input, written, 1);
  for (int hops = 2; hops <= kRegionHops && regions.ok() && regions->has_value(); ++hops) {
    absl::StatusOr<std::optional<DifferingRegions>> wider = FindDifferingRegions(input, written, hops);
    if (!wider.ok() || !wider->has_value() || InRegion(input, (*wider)->nodes_before, cost) > kWidestRegionSeconds)
      break;
    regions = std::move(wider);
  }
  return regions;
}

// The input's time for a run where the speed check timed it: the input is the first of
// every pair it keeps, against the graph written or, where it writes the input (timed or
// not), against the last graph timed.
std::optional<double> InputTimed(const std::optional<PipelineResult::SpeedCheck>& check) {
  if (!check || !(check->timing.a_seconds > 0)) return std::nullopt;
  return check->timing.a_seconds;
}

// Where the written graph computes as the input's: both priced at the input's time where
// the speed check timed it, else nothing (both stay at their prices by operators).
std::optional<RegionPricing> PriceAlike(const RegionTiming& timing) {
  const std::optional<double> input_seconds = InputTimed(timing.speed_check);
  if (!input_seconds) return std::nullopt;
  RegionPricing priced;
  priced.estimate.alike = priced.estimate.input_timed = true;
  priced.estimate.cost_before_by_operators = timing.by_operators.before;
  priced.estimate.cost_after_by_operators = timing.by_operators.after;
  priced.costs = Costs{*input_seconds, *input_seconds};
  return priced;
}

}  // namespace

std::optional<RegionPricing> EstimateByRegions(const OnnxModel& model, const Graph& input, const Graph& written,
                                               CostModel& cost, const RegionTiming& timing) {
  absl::StatusOr<std::optional<DifferingRegions>> regions = RegionsToTime(input, written, cost);
  if (!regions.ok()) return std::nullopt;
  if (!regions->has_value()) return PriceAlike(timing);
  DifferingRegions& found = **regions;
  RegionPricing priced;
  PipelineResult::RegionEstimate& estimate = priced.estimate;
  estimate.nodes_before = found.differing_before;
  estimate.nodes_after = found.differing_after;
  estimate.region_nodes_before = found.before.num_nodes();
  estimate.region_nodes_after = found.after.num_nodes();
  estimate.cost_before_by_operators = timing.by_operators.before;
  estimate.cost_after_by_operators = timing.by_operators.after;
  const OnnxModel region_before = NewOnnxModel(std::move(found.before), model.opset);
  const absl::StatusOr<PairTiming> regions_timed =
      timing.region.Compare(region_before, NewOnnxModel(std::move(found.after), model.opset));
  if (!regions_timed.ok() || !(regions_timed->a_seconds > 0)) return std::nullopt;
  const absl::StatusOr<PairTiming> share = timing.share.Compare(InShellOf(model, input), region_before);
  if (!share.ok() || !(share->a_seconds > 0)) return std::nullopt;
  estimate.timing = *regions_timed;
  estimate.share = *share;
  const std::optional<double> input_seconds = InputTimed(timing.speed_check);
  estimate.input_timed = input_seconds.has_value();
  // Each a ratio of two times taken together, so that the machine's speed, which drifts
  // between the speed check and these timings, cancels.
  const double region_part = share->b_seconds / share->a_seconds;
  const double part_saved = (regions_timed->a_seconds - regions_timed->b_seconds) / regions_timed->a_seconds;
  priced.costs.before = input_seconds.value_or(share->a_seconds);
  priced.costs.after = std::max(0.0, priced.costs.before * (1 - region_part * part_saved));
  return priced;
}

}  // namespace taso::pipeline
