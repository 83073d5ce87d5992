#include "pipeline/region_estimate.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

#include "pipeline/graph_fingerprint.h"
#include "taso/graph_regions.h"
#include "taso/status_macros.h"

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

// The cache keys of a comparison of two graphs, under `label` and their fingerprints: their
// times, and the ratio's spread (kept as that part of a's time, which scales with the
// machine's speed as times do).
struct PairKeys {
  std::string a, b, spread;
};

PairKeys KeysOf(absl::string_view label, const Graph& a, const Graph& b) {
  const std::string pair = absl::StrCat(label, " ", GraphFingerprint(a), " against ", GraphFingerprint(b));
  return {absl::StrCat(pair, ": before"), absl::StrCat(pair, ": after"), absl::StrCat(pair, ": spread")};
}

// A timing whose spread is wider than this is not kept for later runs (one made while the
// machine was busy, say): the next run times the graphs again.
constexpr double kWidestSpreadKept = 0.05;

// `a` against `b`: kept in `kept`'s cache file (with the spread; those kept without one,
// or with one too wide, are timed again), else timed by `timer` (and kept, unless too
// spread).
absl::StatusOr<PairTiming> CachedCompare(absl::string_view label, OnnxModel a, OnnxModel b, MeasuredCost* kept,
                                         RuntimeTimer& timer, bool& from_cache) {
  const PairKeys keys = KeysOf(label, a.graph, b.graph);
  from_cache = false;
  if (kept != nullptr) {
    const std::optional<double> a_seconds = kept->KeptSeconds(keys.a), b_seconds = kept->KeptSeconds(keys.b),
                                spread = kept->KeptSeconds(keys.spread);
    if (a_seconds && b_seconds && spread && *a_seconds > 0 && *spread / *a_seconds <= kWidestSpreadKept) {
      from_cache = true;
      return PairTiming{.a_seconds = *a_seconds, .b_seconds = *b_seconds, .spread = *spread / *a_seconds};
    }
  }
  ASSIGN_OR_RETURN(const PairTiming timing, timer.Compare(a, b));
  if (kept != nullptr && timing.spread <= kWidestSpreadKept) {
    kept->KeepSeconds(keys.a, timing.a_seconds);
    kept->KeepSeconds(keys.b, timing.b_seconds);
    kept->KeepSeconds(keys.spread, timing.spread * timing.a_seconds);
  }
  return timing;
}

}  // namespace

void EstimateByRegions(const OnnxModel& model, const Graph& input, const Graph& written, CostModel& cost,
                       MeasuredCost* kept, RuntimeTimer& region_timer, RuntimeTimer& share_timer,
                       PipelineResult& result) {
  absl::StatusOr<std::optional<DifferingRegions>> regions = RegionsToTime(input, written, cost);
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
  const OnnxModel region_before = NewOnnxModel(std::move(found.before), model.opset);
  const absl::StatusOr<PairTiming> timing =
      CachedCompare("region", region_before, NewOnnxModel(std::move(found.after), model.opset), kept, region_timer,
                    estimate.from_cache);
  if (!timing.ok() || !(timing->a_seconds > 0)) return;
  const absl::StatusOr<PairTiming> share =
      CachedCompare("region share", OnnxModel{input, model.shell, model.opset}, region_before, kept, share_timer,
                    estimate.share_from_cache);
  if (!share.ok() || !(share->a_seconds > 0)) return;
  estimate.timing = *timing;
  estimate.share = *share;
  const std::optional<double> input_seconds = InputTimed(result);
  estimate.input_timed = input_seconds.has_value();
  // Each a ratio of two times taken together, so that the machine's speed, which drifts
  // between the speed check and these timings, cancels.
  const double region_part = share->b_seconds / share->a_seconds;
  const double part_saved = (timing->a_seconds - timing->b_seconds) / timing->a_seconds;
  result.cost_before = input_seconds.value_or(share->a_seconds);
  result.cost_after = std::max(0.0, result.cost_before * (1 - region_part * part_saved));
  result.region_estimate = std::move(estimate);
}

}  // namespace taso::pipeline
