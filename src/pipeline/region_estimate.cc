#include "pipeline/region_estimate.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "taso/graph_regions.h"

namespace taso::pipeline {

namespace {

// What `cost` prices the nodes of `graph` outside `region` at.
double OutsideRegion(const Graph& graph, const std::vector<NodeId>& region, CostModel& cost) {
  std::vector<bool> in_region(graph.num_nodes(), false);
  for (NodeId n : region) in_region[n] = true;
  double seconds = 0;
  for (NodeId n = 0; n < graph.num_nodes(); ++n)
    if (!in_region[n]) seconds += cost.NodeCost(graph, n);
  return seconds;
}

// The input's time for a run where the speed check timed it against the graph written.
std::optional<double> InputTimed(const PipelineResult& result) {
  const auto& check = result.speed_check;
  if (!check || check->written_untimed || check->kept_input || !(check->timing.a_seconds > 0)) return std::nullopt;
  return check->timing.a_seconds;
}

}  // namespace

void EstimateByRegions(const OnnxModel& model, const Graph& input, const Graph& written, CostModel& cost,
                       RuntimeTimer& timer, PipelineResult& result) {
  absl::StatusOr<std::optional<DifferingRegions>> regions = FindDifferingRegions(input, written);
  if (!regions.ok() || !regions->has_value()) return;
  DifferingRegions& found = **regions;
  PipelineResult::RegionEstimate estimate;
  estimate.nodes_before = found.differing_before;
  estimate.nodes_after = found.differing_after;
  estimate.region_nodes_before = found.before.num_nodes();
  estimate.region_nodes_after = found.after.num_nodes();
  estimate.cost_before_by_operators = result.cost_before;
  estimate.cost_after_by_operators = result.cost_after;
  absl::StatusOr<PairTiming> timing = timer.Compare(NewOnnxModel(std::move(found.before), model.opset),
                                                    NewOnnxModel(std::move(found.after), model.opset));
  if (!timing.ok()) return;
  estimate.timing = *timing;
  const std::optional<double> input_seconds = InputTimed(result);
  estimate.input_timed = input_seconds.has_value();
  result.cost_before =
      input_seconds ? *input_seconds : OutsideRegion(input, found.nodes_before, cost) + timing->a_seconds;
  result.cost_after = std::max(0.0, result.cost_before - (timing->a_seconds - timing->b_seconds));
  result.region_estimate = std::move(estimate);
}

}  // namespace taso::pipeline
