// What a pipeline run reports: the summary taso-opt prints and the JSON of --report
// (bench/ scripts read both, line by line).
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "taso/pipeline.h"

namespace taso {

namespace {

bool StoppedByLimit(const SearchResult& search) { return search.stop_reason != StopReason::kQueueEmpty; }

// The first two lines: what became of the graph and what it is estimated to cost.
std::string GraphLines(const PipelineOptions& options, const PipelineResult& r, absl::string_view model_name) {
  const SearchResult& search = r.search;
  return absl::StrFormat(
      "%s: %d nodes -> %d nodes; %d rule instances (both directions)\n"
      "estimated cost (%s): %.4f ms -> %.4f ms (%.2fx); the search itself: %.4f ms -> %.4f ms\n",
      model_name, r.nodes_before, r.model.graph.num_nodes(), r.rule_instances, BackendName(options.backend),
      r.cost_before * 1e3, r.cost_after * 1e3, r.cost_after > 0 ? r.cost_before / r.cost_after : 1.0,
      search.initial_cost * 1e3, search.best_cost * 1e3);
}

// The layouts, the search and where the costs came from.
std::string SearchLines(const PipelineOptions& options, const PipelineResult& r) {
  const SearchResult& search = r.search;
  std::string out;
  if (r.layouts)
    absl::StrAppendFormat(&out, "layouts: %d nodes blocked, %d layout conversions\n", r.layouts->blocked_nodes,
                          r.layouts->conversions);
  absl::StrAppendFormat(&out, "search (%s): %.2f s, %d graphs expanded, %d seen%s\n", SearchKindName(options.search),
                        search.seconds, search.expansions, search.graphs_seen,
                        StoppedByLimit(search) ? " (stopped by --budget or --time-limit)" : "");
  if (r.cost_sources)
    absl::StrAppendFormat(&out, "costs (%s): %d measured, %d from the cache, %d estimated (no %s kernel)\n",
                          r.cost_sources->device, r.cost_sources->counts.measured, r.cost_sources->counts.cached,
                          r.cost_sources->counts.estimated, BackendName(options.backend));
  if (r.substitutions_dropped)
    absl::StrAppendFormat(&out, "substitutions: none kept, the best gain found (%.2f%%) is below %.1f%%\n",
                          100 * (1 - search.best_cost / search.initial_cost), 100 * kMinSearchGain);
  for (const auto& [rule, n] : search.rules_applied) absl::StrAppendFormat(&out, "  applied %-10s x%d\n", rule, n);
  return out;
}

// The self-check and the measurement, when they ran.
std::string CheckLines(const PipelineResult& r) {
  std::string out;
  if (r.self_check_difference)
    absl::StrAppendFormat(&out, "self-check: max |difference| of outputs %g\n", *r.self_check_difference);
  if (const auto& m = r.measured)
    absl::StrAppendFormat(&out,
                          "measured (%s executor, medians of %d runs in turn over %d executor pairs): %.3f ms -> "
                          "%.3f ms (%.2fx)\n",
                          BackendName(m->executor), m->runs, kMeasurePairs, m->before_seconds * 1e3,
                          m->after_seconds * 1e3, m->before_seconds / m->after_seconds);
  return out;
}

// Each symbolic input dimension: the size searched at, and whether the output keeps it.
std::string SymbolicLines(const PipelineResult& r) {
  std::string out;
  for (const PipelineResult::SymbolicDimension& d : r.symbolic_dims) {
    absl::StrAppendFormat(&out, "symbolic dimension '%s': searched at %d%s; ", d.name, d.built_at,
                          d.given ? " (--input-shape)" : " (no --input-shape given: symbolic dimensions take 1)");
    if (d.kept)
      absl::StrAppendFormat(&out, "kept symbolic (self-check passed at %s too)\n",
                            absl::StrJoin(d.checked_at, " and "));
    else
      absl::StrAppendFormat(&out, "written fixed at %d: %s\n", d.built_at, d.why_fixed);
  }
  return out;
}

std::string JsonSymbolicDims(const PipelineResult& r) {
  std::vector<std::string> dims;
  for (const PipelineResult::SymbolicDimension& d : r.symbolic_dims)
    dims.push_back(absl::StrCat("{\"name\": \"", d.name, "\", \"built_at\": ", d.built_at,
                                ", \"kept\": ", d.kept ? "true" : "false", ", \"checked_at\": [",
                                absl::StrJoin(d.checked_at, ", "), "]}"));
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

std::string JsonMeasured(const PipelineResult& r) {
  if (!r.measured) return "null";
  const PipelineResult::Measurement& m = *r.measured;
  return absl::StrCat("{\"executor\": \"", BackendName(m.executor), "\", \"runs\": ", m.runs,
                      ", \"before_ms\": ", m.before_seconds * 1e3, ", \"after_ms\": ", m.after_seconds * 1e3,
                      ", \"seconds\": ", m.seconds, "}");
}

std::string JsonSelfCheck(const PipelineResult& r) {
  if (!r.self_check_difference) return "null";
  return absl::StrCat("{\"max_abs_difference\": ", *r.self_check_difference, "}");
}

std::string JsonRulesApplied(const SearchResult& search) {
  std::vector<std::string> applied;
  for (const auto& [rule, n] : search.rules_applied) applied.push_back(absl::StrCat("\"", rule, "\": ", n));
  return absl::StrCat("{", absl::StrJoin(applied, ", "), "}");
}

}  // namespace

std::string SummaryText(const PipelineOptions& options, const PipelineResult& result, absl::string_view model_name) {
  return GraphLines(options, result, model_name) + SearchLines(options, result) + CheckLines(result) +
         SymbolicLines(result);
}

std::string JsonReport(const PipelineOptions& options, const PipelineResult& r) {
  const SearchResult& search = r.search;
  const PipelineResult::Layouts layouts = r.layouts.value_or(PipelineResult::Layouts{});
  return absl::StrCat(
      "{\n  \"backend\": \"", BackendName(options.backend), "\",\n  \"search\": \"", SearchKindName(options.search),
      "\",\n  \"blocked_nodes\": ", layouts.blocked_nodes, ",\n  \"layout_conversions\": ", layouts.conversions,
      ",\n  \"cost_before_ms\": ", r.cost_before * 1e3, ",\n  \"cost_after_ms\": ", r.cost_after * 1e3,
      ",\n  \"search_cost_before_ms\": ", search.initial_cost * 1e3,
      ",\n  \"search_cost_after_ms\": ", search.best_cost * 1e3, ",\n  \"search_seconds\": ", search.seconds,
      ",\n  \"expansions\": ", search.expansions, ",\n  \"graphs_seen\": ", search.graphs_seen,
      ",\n  \"stopped_by_limit\": ", StoppedByLimit(search) ? "true" : "false", ",\n  \"stop_reason\": \"",
      StopReasonName(search.stop_reason), "\",\n  \"self_check\": ", JsonSelfCheck(r),
      ",\n  \"measured\": ", JsonMeasured(r), ",\n  \"rules_applied\": ", JsonRulesApplied(search),
      ",\n  \"symbolic_dims\": ", JsonSymbolicDims(r), "\n}\n");
}

}  // namespace taso
