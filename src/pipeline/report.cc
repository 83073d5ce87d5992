// What a pipeline run reports: the summary taso-opt prints and the JSON of --report
// (bench/ scripts read both, line by line).
#include <cmath>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "pipeline/change_summary.h"
#include "pipeline/symbolic_dims.h"
#include "taso/backends/ort_worker.h"
#include "taso/ir/output_agreement.h"
#include "taso/pipeline/pipeline.h"

namespace taso {

namespace {

// Why the search ended, in its engine's words, and whether a limit ended it (not the
// search running out of work, nor an e-graph that could not be built); "none" where no
// search ran.
struct SearchStop {
  absl::string_view reason = "none";
  bool by_limit = false;
};
SearchStop StopOf(const PipelineResult& r) {
  if (const auto* b = std::get_if<BacktrackingStats>(&r.engine))
    return {StopReasonName(b->stop_reason), b->stop_reason != StopReason::kQueueEmpty};
  if (const auto* e = std::get_if<egraph::EGraphStats>(&r.engine)) {
    const egraph::SaturationStop stop = e->saturation.stop;
    return {egraph::SaturationStopName(stop),
            stop != egraph::SaturationStop::kSaturated && stop != egraph::SaturationStop::kNotBuilt};
  }
  return {};
}

// How a comparison was made: its spread and session pairs.
std::string HowTimed(const PairTiming& t) {
  return absl::StrFormat("spread +-%.1f%%, %d session pairs", 100 * t.spread, t.pairs);
}

// How the estimate after was made where the regions that differ were timed.
std::string RegionLine(const PipelineResult& r) {
  if (!r.region_estimate) return "";
  const PipelineResult::RegionEstimate& e = *r.region_estimate;
  if (e.alike)
    return absl::StrFormat(
        "  the output computes as the input: both priced at the input's time as the speed check timed it; by "
        "operators alone: %.4f ms -> %.4f ms\n",
        e.cost_before_by_operators * 1e3, e.cost_after_by_operators * 1e3);
  const std::string how = HowTimed(e.timing);
  if (e.input_written)
    return absl::StrFormat(
        "  the search's graph, where its %d operators that differ (%d in it) and their neighbours were timed as two "
        "models, ran measurably slower: %.4f ms -> %.4f ms (%s); the input is written as read\n",
        e.nodes_before, e.nodes_after, e.timing.a_seconds * 1e3, e.timing.b_seconds * 1e3, how);
  const double saved = e.timing.a_seconds > 0 ? 1 - e.timing.b_seconds / e.timing.a_seconds : 0;
  const double part = e.share.a_seconds > 0 ? e.share.b_seconds / e.share.a_seconds : 0;
  return absl::StrFormat(
      "  the output priced as the input (%s) less the part the %d operators that differ (%d in the output) save, "
      "timed with their neighbours as two models: %.4f ms -> %.4f ms (%s), %.1f%% saved of a region that takes "
      "%.1f%% of the input's time (the input against it: %.4f ms, %.4f ms, %s); by operators alone: %.4f ms -> "
      "%.4f ms\n",
      e.input_timed ? "as the speed check timed it" : "as timed against its region", e.nodes_before, e.nodes_after,
      e.timing.a_seconds * 1e3, e.timing.b_seconds * 1e3, how, 100 * saved, 100 * part, e.share.a_seconds * 1e3,
      e.share.b_seconds * 1e3, HowTimed(e.share), e.cost_before_by_operators * 1e3, e.cost_after_by_operators * 1e3);
}

// The first two lines: what became of the graph and what it is estimated to cost.
std::string GraphLines(const PipelineOptions& options, const PipelineResult& r, absl::string_view model_name) {
  const SearchFound& search = r.search;
  return absl::StrFormat(
             "%s: %d nodes -> %d nodes; %d rule instances (both directions)\n"
             "estimated cost (%s): %.4f ms -> %.4f ms (%.2fx); the search itself: %.4f ms -> %.4f ms\n",
             model_name, r.nodes_before, r.nodes_after, r.rule_instances, BackendName(options.backend),
             r.cost_before * 1e3, r.cost_after * 1e3, r.cost_after > 0 ? r.cost_before / r.cost_after : 1.0,
             search.initial_cost * 1e3, search.best_cost * 1e3) +
         RegionLine(r);
}

std::string EGraphLine(const egraph::EGraphStats& e) {
  std::string out = absl::StrFormat(
      "e-graph: %d iterations, %d e-nodes, %d e-classes, ~%.1f MiB, stopped: %s (%.2f s); extraction: %s (%.2f s)\n",
      e.saturation.iterations, e.enodes, e.eclasses, e.approx_bytes / 1048576.0,
      egraph::SaturationStopName(e.saturation.stop), e.saturation.seconds, e.extractor, e.extraction_seconds);
  absl::StrAppendFormat(&out, "  of which joining work first: %d iterations, stopped: %s (%.2f s)\n",
                        e.joining.iterations, egraph::SaturationStopName(e.joining.stop), e.joining.seconds);
  if (!e.exact.empty())
    absl::StrAppendFormat(&out, "  integer program: %s; DAG cost %.4f ms (greedy and local search: %.4f ms)\n", e.exact,
                          e.exact_cost * 1e3, e.greedy_cost * 1e3);
  if (e.priced_operators > 0)
    absl::StrAppendFormat(&out, "  e-node prices: %d operators measured of %d (the rest analytic, scaled)\n",
                          e.measured_operators, e.priced_operators);
  if (!e.kept_input_because.empty()) absl::StrAppend(&out, "  input kept: ", e.kept_input_because, "\n");
  for (size_t k = 0; k < e.later_rounds.size(); ++k) {
    const egraph::EGraphStats& round = e.later_rounds[k];
    absl::StrAppendFormat(
        &out,
        "  round %d, from the graph found before: %d iterations, %d e-nodes, stopped: %s (%.2f s); extraction: %s "
        "(%.2f s)%s\n",
        k + 2, round.saturation.iterations, round.enodes, egraph::SaturationStopName(round.saturation.stop),
        round.saturation.seconds, round.extractor, round.extraction_seconds,
        round.kept_input_because.empty() ? "" : absl::StrCat("; its input kept: ", round.kept_input_because));
  }
  return out;
}

// The rounds after the first (EGraphStats::later_rounds), as a JSON array.
std::string JsonLaterRounds(const egraph::EGraphStats& e) {
  std::vector<std::string> rounds;
  for (const egraph::EGraphStats& round : e.later_rounds)
    rounds.push_back(absl::StrCat("{\"iterations\": ", round.saturation.iterations, ", \"enodes\": ", round.enodes,
                                  ", \"stop\": \"", egraph::SaturationStopName(round.saturation.stop),
                                  "\", \"saturation_seconds\": ", round.saturation.seconds, ", \"extractor\": \"",
                                  round.extractor, "\", \"extraction_seconds\": ", round.extraction_seconds, "}"));
  return absl::StrCat("[", absl::StrJoin(rounds, ", "), "]");
}

std::string JsonEGraph(const PipelineResult& r) {
  const auto* stats = std::get_if<egraph::EGraphStats>(&r.engine);
  if (stats == nullptr) return "null";
  const egraph::EGraphStats& e = *stats;
  return absl::StrCat("{\"iterations\": ", e.saturation.iterations, ", \"enodes\": ", e.enodes,
                      ", \"eclasses\": ", e.eclasses, ", \"approx_bytes\": ", e.approx_bytes, ", \"stop\": \"",
                      egraph::SaturationStopName(e.saturation.stop),
                      "\", \"saturation_seconds\": ", e.saturation.seconds, ", \"extractor\": \"", e.extractor,
                      "\", \"extraction_seconds\": ", e.extraction_seconds, ", \"exact\": \"", e.exact,
                      "\", \"greedy_cost_ms\": ", e.greedy_cost * 1e3, ", \"exact_cost_ms\": ", e.exact_cost * 1e3,
                      ", \"measured_operators\": ", e.measured_operators,
                      ", \"priced_operators\": ", e.priced_operators, ", \"later_rounds\": ", JsonLaterRounds(e), "}");
}

// What the summary adds to the backtracking search's line when a limit stopped it.
absl::string_view BacktrackingStopText(StopReason reason) {
  switch (reason) {
    case StopReason::kBudget:
      return " (stopped by --budget)";
    case StopReason::kTimeLimit:
      return " (stopped by --time-limit)";
    case StopReason::kQueueEmpty:
      return "";
  }
  return "";
}

// The backtracking search's figures as JSON, null where it did not run.
std::string JsonCount(const PipelineResult& r, int64_t BacktrackingStats::*count) {
  const auto* b = std::get_if<BacktrackingStats>(&r.engine);
  return b ? absl::StrCat(b->*count) : "null";
}

// The layouts, the search and where the costs came from.
std::string SearchLines(const PipelineOptions& options, const PipelineResult& r) {
  const SearchFound& search = r.search;
  std::string out;
  if (r.rule_instances_unusable > 0)
    absl::StrAppendFormat(&out,
                          "rules: %d directed instances left out, the matcher cannot use them (no operator to match, "
                          "an input passed through)\n",
                          r.rule_instances_unusable);
  if (r.layouts)
    absl::StrAppendFormat(&out, "layouts: %d nodes blocked, %d layout conversions\n", r.layouts->blocked_nodes,
                          r.layouts->conversions);
  if (const auto* e = std::get_if<egraph::EGraphStats>(&r.engine)) {  // its line says what stopped saturation
    absl::StrAppendFormat(&out, "search (%s, e-graph): %.2f s\n", SearchKindName(options.search), search.seconds);
    out += EGraphLine(*e);
  } else if (const auto* b = std::get_if<BacktrackingStats>(&r.engine)) {
    absl::StrAppendFormat(&out, "search (%s): %.2f s, %d graphs expanded, %d seen%s\n", SearchKindName(options.search),
                          search.seconds, b->expansions, b->graphs_seen, BacktrackingStopText(b->stop_reason));
  }
  if (r.cost_sources)
    absl::StrAppendFormat(&out, "costs (%s): %d measured, %d from the cache, %d estimated (no %s kernel)\n",
                          r.cost_sources->device, r.cost_sources->counts.measured, r.cost_sources->counts.cached,
                          r.cost_sources->counts.estimated, BackendName(options.backend));
  if (const std::optional<double> gain = r.dropped_search_gain)
    absl::StrAppendFormat(
        &out, "substitutions: %s, the search's gain (%.2f%%) is below %.1f%%\n",
        search.rules_applied.empty() ? "none kept" : "the search's own graph dropped (another written)", 100 * *gain,
        100 * kMinSearchGain);
  for (const auto& [rule, n] : search.rules_applied) absl::StrAppendFormat(&out, "  applied %-10s x%d\n", rule, n);
  return out;
}

// "LSTM x2, Resize x3"
std::string CountsByName(const std::map<std::string, int>& counts) {
  return absl::StrJoin(
      counts, ", ", [](std::string* out, const auto& entry) { absl::StrAppend(out, entry.first, " x", entry.second); });
}

// "inputs in [-1, 1] and [-10, 10]".
std::string InputScalesText(const std::vector<double>& scales) {
  return absl::StrCat("inputs in ", absl::StrJoin(scales, " and ", [](std::string* out, double s) {
                        absl::StrAppend(out, "[-", s, ", ", s, "]");
                      }));
}

// What the self-check compared, or that nothing was checked.
std::string SelfCheckLine(const PipelineOptions& options, const PipelineResult& r) {
  if (!options.self_check) return "self-check: skipped (--skip_self_check): NOTHING WAS CHECKED\n";
  if (!r.self_check) return "";
  const SelfCheckCoverage& c = *r.self_check;
  std::string out = absl::StrFormat(
      "self-check: %d random inputs (%s), %d compared tensors (%d outputs, %d opaque inputs), max |difference| %g",
      c.random_inputs, InputScalesText(c.input_scales), c.outputs + c.opaque_inputs, c.outputs, c.opaque_inputs,
      c.max_difference);
  if (c.by_source > 0) absl::StrAppendFormat(&out, ", %d non-float values compared by source", c.by_source);
  int fed = 0;
  for (const auto& [type, n] : c.fed_opaque) fed += n;
  if (fed > 0) absl::StrAppendFormat(&out, "; %d opaque nodes (%s) fed random values", fed, CountsByName(c.fed_opaque));
  if (c.library_nodes_run < c.library_nodes)
    absl::StrAppendFormat(&out,
                          "; %d of the optimized graph's %d library nodes run, the others computing exactly what "
                          "nodes of the input do",
                          c.library_nodes_run, c.library_nodes);
  return out + "\n";
}

// "b=2, past=5 and at past=0": the sizes the end-to-end check ran at besides the sizes
// built; empty for none.
std::string OtherSizesText(const EndToEndCheck& e) {
  std::vector<std::string> sizes;
  for (const std::string* s : {&e.other_sizes, &e.empty_sizes})
    if (!s->empty()) sizes.push_back(*s);
  return absl::StrJoin(sizes, " and at ");
}

// The written file against the input file in the target's runtime, when it was checked.
std::string EndToEndLine(const PipelineResult& r) {
  if (!r.end_to_end) return "";
  const EndToEndCheck& e = *r.end_to_end;
  if (!e.not_run.empty()) return absl::StrCat("end-to-end: NOT CHECKED: ", e.not_run, "\n");
  const std::string other = OtherSizesText(e);
  const std::string sizes = other.empty() ? "" : absl::StrCat(", at the sizes built and at ", other);
  return absl::StrFormat(
      "end-to-end: the file written gives the input file's %d outputs in %s (%s%s), max |difference| %g; "
      "closest to its tolerance: %s for inputs in [-%g, %g], at %.3g of it\n",
      e.outputs, e.runtime, InputScalesText(e.input_scales), sizes, e.max_difference, e.worst, e.worst_input_scale,
      e.worst_input_scale, e.worst_relative / kOutputTolerance);
}

// The self-check and the measurement, when they ran.
std::string CheckLines(const PipelineOptions& options, const PipelineResult& r) {
  std::string out;
  if (!r.rejected_rules.empty())
    absl::StrAppendFormat(&out,
                          "self-check: REJECTED the search's rewrites (%s): %s; the graph without them was checked "
                          "instead\n",
                          CountsByName(r.rejected_rules), r.rejection);
  out += SelfCheckLine(options, r) + EndToEndLine(r);
  if (const auto& m = r.measured)
    absl::StrAppendFormat(&out,
                          "measured (%s executor, medians of %d runs in turn over %d executor pairs): %.3f ms -> "
                          "%.3f ms (%.2fx)\n",
                          BackendName(m->executor), m->runs, kMeasurePairs, m->before_seconds * 1e3,
                          m->after_seconds * 1e3, m->before_seconds / m->after_seconds);
  return out;
}

constexpr absl::string_view kTimeSpent = "the speed check's time (--verify-speed-seconds) was spent";

// The line on the speed check at larger sizes (speed_at_sizes.h), where it was made.
std::string LargerSizesLine(const PipelineResult& r) {
  if (!r.larger_sizes) return "";
  const PipelineResult::LargerSizesCheck& l = *r.larger_sizes;
  if (!l.not_timed.empty()) return absl::StrFormat("  not timed at larger sizes (%s): %s\n", l.sizes, l.not_timed);
  const PairTiming& t = l.timing;
  const std::string verdict =
      l.slower        ? absl::StrFormat("slower there, twice (first %.3fx), so the input is written as read",
                                        l.first_ratio.value_or(t.ratio()))
      : l.first_ratio ? absl::StrFormat("not slower there when timed again (first %.3fx)", *l.first_ratio)
                      : "not slower there";
  return absl::StrFormat(
      "  timed at larger sizes too (%s): %.3f ms -> %.3f ms (%.3fx, spread +-%.1f%%, %d session pairs); %s\n", l.sizes,
      t.a_seconds * 1e3, t.b_seconds * 1e3, t.ratio(), 100 * t.spread, t.pairs, verdict);
}

// Which of the e-graph's graphs the speed check chose, where it tried others.
std::string ExtractionLine(const PipelineResult::SpeedCheck& c) {
  if (!c.extraction.empty() && c.beat_search)
    return absl::StrFormat(
        "  %s is written: measurably faster than the e-graph's extraction by the target's costs, "
        "which was faster than the input\n",
        pipeline::AlternativeName(c.extraction));
  if (!c.extraction.empty() && !c.beat_other.empty())
    return absl::StrFormat("  %s is written: measurably faster than %s, which was faster than the input\n",
                           pipeline::AlternativeName(c.extraction), pipeline::AlternativeName(c.beat_other));
  if (!c.extraction.empty() && c.timed_before_search)
    return absl::StrFormat(
        "  %s is written: measurably faster than the input; timed before the search's result, which the search's "
        "costs price higher\n",
        pipeline::AlternativeName(c.extraction));
  if (!c.extraction.empty())
    return absl::StrFormat("  %s is written: measurably faster than the input, where the search's result was not\n",
                           pipeline::AlternativeName(c.extraction));
  if (c.other_extractions_timed > 0)
    return absl::StrFormat("  %d other graph(s) timed too: none measurably faster\n", c.other_extractions_timed);
  return "";
}

// The speed check: the input and the model returned, timed end to end in the target's
// runtime (or, where the time ran out first, the last model timed).
std::string SpeedCheckLines(const PipelineResult& r) {
  if (!r.speed_not_verified.empty())
    return absl::StrCat("speed check: NOT POSSIBLE: ", r.speed_not_verified,
                        "; the input is written as read (--no-verify-speed writes the search's result on its "
                        "estimate)\n");
  if (!r.speed_check) return "";
  const PipelineResult::SpeedCheck& c = *r.speed_check;
  const PairTiming& t = c.timing;
  const std::string figures =
      absl::StrFormat("%.3f ms -> %.3f ms (%.3fx, spread +-%.1f%%, %d session pairs, %d runs each%s%s)",
                      t.a_seconds * 1e3, t.b_seconds * 1e3, t.ratio(), 100 * t.spread, t.pairs, t.runs,
                      t.sessions_apart ? ", each session alone: two would not fit in memory" : "",
                      t.Resolved() ? "" : "; the difference could not be resolved");
  std::string out = c.written_untimed
                        ? absl::StrCat("timed in ", c.runtime, ", the input against a rewritten model: ", figures, "\n")
                        : absl::StrCat("verified in ", c.runtime, ": ", figures, "\n");
  // Where the check at larger sizes or the output's own estimate undid it, what the speed
  // check chose is not written, so no line names it as written.
  const bool undone = (r.larger_sizes && r.larger_sizes->slower) || r.estimated_slower.has_value();
  if (!undone) out += ExtractionLine(c);
  if (c.other_extractions_untimed > 0)
    absl::StrAppendFormat(&out, "  %d other graph(s) not timed: %s\n", c.other_extractions_untimed, kTimeSpent);
  if (c.groups_dropped_untimed > 0)
    absl::StrAppendFormat(&out, "  %d group(s) of rewrites dropped untimed: %s\n", c.groups_dropped_untimed,
                          kTimeSpent);
  if (c.written_untimed)
    absl::StrAppendFormat(&out, "  not measurably faster: the input is written as read (itself not timed: %s)\n",
                          kTimeSpent);
  else if (c.kept_input)
    absl::StrAppendFormat(&out, "  no rewrite made it measurably faster: the input is written as read\n");
  else if (r.estimated_slower)
    absl::StrAppendFormat(&out, "  its estimate prices it above the input: the input is written as read\n");
  else if (c.rewrites_kept < c.rewrites && !undone)
    absl::StrAppendFormat(&out, "  kept %d of %d rewrites (%d timings)\n", c.rewrites_kept, c.rewrites, c.comparisons);
  return out + LargerSizesLine(r);
}

std::string JsonLargerSizes(const PipelineResult& r) {
  if (!r.larger_sizes) return "null";
  const PipelineResult::LargerSizesCheck& l = *r.larger_sizes;
  if (!l.not_timed.empty())
    return absl::StrCat("{\"sizes\": ", JsonQuote(l.sizes), ", \"not_timed\": ", JsonQuote(l.not_timed), "}");
  return absl::StrCat("{\"sizes\": ", JsonQuote(l.sizes), ", \"before_ms\": ", l.timing.a_seconds * 1e3,
                      ", \"after_ms\": ", l.timing.b_seconds * 1e3, ", \"ratio\": ", l.timing.ratio(),
                      ", \"resolved\": ", l.timing.Resolved() ? "true" : "false",
                      ", \"first_ratio\": ", l.first_ratio ? absl::StrCat(*l.first_ratio) : "null",
                      ", \"slower\": ", l.slower ? "true" : "false", "}");
}

std::string JsonSpeedCheck(const PipelineResult& r) {
  if (!r.speed_check) return "null";
  const PipelineResult::SpeedCheck& c = *r.speed_check;
  const PairTiming& t = c.timing;
  return absl::StrCat("{\"runtime\": \"", c.runtime, "\", \"before_ms\": ", t.a_seconds * 1e3,
                      ", \"after_ms\": ", t.b_seconds * 1e3, ", \"ratio\": ", t.ratio(),
                      ", \"spread\": ", std::isfinite(t.spread) ? absl::StrCat(t.spread) : "null",
                      ", \"resolved\": ", t.Resolved() ? "true" : "false", ", \"pairs\": ", t.pairs,
                      ", \"runs\": ", t.runs, ", \"sessions_apart\": ", t.sessions_apart ? "true" : "false",
                      ", \"rewrites\": ", c.rewrites, ", \"rewrites_kept\": ", c.rewrites_kept,
                      ", \"comparisons\": ", c.comparisons, ", \"kept_input\": ", c.kept_input ? "true" : "false",
                      ", \"other_extractions_timed\": ", c.other_extractions_timed,
                      ", \"other_extractions_untimed\": ", c.other_extractions_untimed,
                      ", \"groups_dropped_untimed\": ", c.groups_dropped_untimed,
                      ", \"written_untimed\": ", c.written_untimed ? "true" : "false",
                      ", \"extraction\": ", c.extraction.empty() ? "null" : absl::StrCat("\"", c.extraction, "\""),
                      ", \"beat_search\": ", c.beat_search ? "true" : "false",
                      ", \"beat_other\": ", c.beat_other.empty() ? "null" : JsonQuote(c.beat_other),
                      ", \"timed_before_search\": ", c.timed_before_search ? "true" : "false",
                      ", \"larger_sizes\": ", JsonLargerSizes(r), "}");
}

// One row of the table: a label, then lines of text aligned after it.
void Row(std::string& out, absl::string_view label, const std::vector<std::string>& lines) {
  for (size_t i = 0; i < lines.size(); ++i) absl::StrAppendFormat(&out, "  %-20s %s\n", i == 0 ? label : "", lines[i]);
}

std::string Speed(double before_s, double after_s) {
  return absl::StrFormat("%.4f ms -> %.4f ms (%.2fx)", before_s * 1e3, after_s * 1e3,
                         after_s > 0 ? before_s / after_s : 1.0);
}

std::vector<std::string> RewriteLines(const PipelineResult& r) {
  std::vector<std::string> lines;
  for (const auto& [rule, n] : r.search.rules_applied) {
    auto form = r.rule_forms.find(rule);
    lines.push_back(absl::StrCat(rule, " x", n, form == r.rule_forms.end() ? "" : ": " + form->second));
  }
  if (!lines.empty()) return lines;
  if (r.larger_sizes && r.larger_sizes->slower)
    lines.push_back(absl::StrFormat("none kept: faster at the sizes searched, %.3fx at %s",
                                    r.larger_sizes->timing.ratio(), r.larger_sizes->sizes));
  else if (r.region_estimate && r.region_estimate->input_written)
    lines.push_back("none kept: the search's graph ran measurably slower where it differs (timed as regions)");
  else if (const auto& slower = r.estimated_slower)
    lines.push_back(
        absl::StrFormat("none kept: priced %.4f ms against the input's %.4f ms, the input is written as read",
                        slower->rewritten_seconds * 1e3, slower->input_seconds * 1e3));
  else
    lines.push_back(r.dropped_search_gain ? "none kept: the gain found is within noise" : "none");
  return lines;
}

std::vector<std::string> LeftAloneLines(const PipelineResult& r) {
  std::vector<std::string> lines;
  for (const auto& [why, types] : r.left_alone) lines.push_back(absl::StrCat(why, ": ", CountsByName(types)));
  if (lines.empty()) lines.push_back("nothing: every node is in the operator library");
  return lines;
}

std::string SelfCheckCell(const PipelineOptions& options, const PipelineResult& r) {
  if (r.nothing_to_optimize) return "nothing to check: the model is written as read, its constants as initializers";
  if (!options.self_check || !r.self_check) return "skipped: NOTHING WAS CHECKED";
  const SelfCheckCoverage& c = *r.self_check;
  int fed = 0;
  for (const auto& [type, n] : c.fed_opaque) fed += n;
  return absl::StrFormat("passed: %d tensors compared (%d around %d opaque nodes), %s, max |difference| %g",
                         c.outputs + c.opaque_inputs, c.opaque_inputs, fed, InputScalesText(c.input_scales),
                         c.max_difference);
}

// The closing table: what changed, how fast, what was left alone and why, what was checked.
std::string ChangeTable(const PipelineOptions& options, const PipelineResult& r, absl::string_view model_name) {
  std::string out = absl::StrCat("what changed in ", model_name, ":\n");
  Row(out, "nodes", {absl::StrCat(r.nodes_before, " -> ", r.nodes_after)});
  if (r.nothing_to_optimize) {
    Row(out, "optimized", {"nothing could be: no node computes with the library's operators"});
  } else {
    Row(out, absl::StrCat("estimated (", BackendName(options.backend), ")"), {Speed(r.cost_before, r.cost_after)});
    if (const auto& m = r.measured)
      Row(out, absl::StrCat("measured (", BackendName(m->executor), ")"), {Speed(m->before_seconds, m->after_seconds)});
    // Not where the model timed is not the one written (priced above the input after).
    const bool slower_larger = r.larger_sizes && r.larger_sizes->slower;
    if (const auto& c = r.speed_check; c && !c->written_untimed && !r.estimated_slower && !slower_larger)
      Row(out, absl::StrCat("verified (", c->runtime, ")"), {Speed(c->timing.a_seconds, c->timing.b_seconds)});
    if (!r.speed_not_verified.empty())
      Row(out, absl::StrCat("verified (", TargetName(options.target), ")"),
          {"NOT POSSIBLE: the input is written as read (see the speed check above)"});
    Row(out, "rewrites applied", RewriteLines(r));
  }
  if (!r.rejected_rules.empty())
    Row(out, "rewrites rejected", {absl::StrCat(CountsByName(r.rejected_rules), " by the self-check: ", r.rejection)});
  Row(out, "left alone", LeftAloneLines(r));
  Row(out, "self-check", {SelfCheckCell(options, r)});
  if (const auto& e = r.end_to_end)
    Row(out, "end-to-end",
        {e->not_run.empty()
             ? absl::StrFormat("passed in %s: %d outputs, %s%s, max |difference| %g", e->runtime, e->outputs,
                               InputScalesText(e->input_scales),
                               OtherSizesText(*e).empty() ? "" : absl::StrCat(", also at ", OtherSizesText(*e)),
                               e->max_difference)
             : absl::StrCat("NOT CHECKED: ", e->not_run)});
  return out;
}

// ", as past + seq" for a dimension kept as a sum; else empty.
std::string SumText(const PipelineResult::SymbolicDimension& d) {
  if (d.sum_of.empty()) return "";
  return absl::StrCat(", as ", absl::StrJoin(d.sum_of, " + "), d.sum_plus ? absl::StrCat(" + ", d.sum_plus) : "");
}

// Each symbolic input dimension: the size searched at (built at, where nothing could be
// optimized), and whether the output keeps it.
std::string SymbolicLines(const PipelineResult& r) {
  std::string out;
  const char* built = r.nothing_to_optimize ? "built" : "searched";
  for (const PipelineResult::SymbolicDimension& d : r.symbolic_dims) {
    absl::StrAppendFormat(&out, "symbolic dimension '%s': %s at %d (%s); ", d.name, built, d.built_at,
                          d.given                 ? "--input-shape"
                          : d.why_not_one.empty() ? "no --input-shape given: symbolic dimensions take 1"
                                                  : absl::StrCat("no --input-shape given; the smallest power of two "
                                                                 "the model builds at, as at 1: ",
                                                                 d.why_not_one));
    if (d.kept && r.nothing_to_optimize)
      absl::StrAppendFormat(&out, "kept symbolic (the model is written as read)\n");
    else if (d.kept)
      absl::StrAppendFormat(&out, "kept symbolic%s (self-check passed at %s too, %s)\n", SumText(d),
                            absl::StrJoin(d.checked_at, " and "), InputScalesText({pipeline::kSymbolicCheckScale}));
    else
      absl::StrAppendFormat(&out, "written fixed at %d: %s\n", d.built_at, d.why_fixed);
  }
  return out;
}

std::string JsonSymbolicDims(const PipelineResult& r) {
  std::vector<std::string> dims;
  for (const PipelineResult::SymbolicDimension& d : r.symbolic_dims)
    dims.push_back(absl::StrCat(
        "{\"name\": \"", d.name, "\", \"built_at\": ", d.built_at, ", \"kept\": ", d.kept ? "true" : "false",
        ", \"checked_at\": [", absl::StrJoin(d.checked_at, ", "), "], \"sum_of\": [",
        absl::StrJoin(d.sum_of, ", ", [](std::string* out, const std::string& name) { out->append(JsonQuote(name)); }),
        "], \"sum_plus\": ", d.sum_plus, ", \"why_not_one\": ", JsonQuote(d.why_not_one), "}"));
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

std::string JsonMeasured(const PipelineResult& r) {
  if (!r.measured) return "null";
  const PipelineResult::Measurement& m = *r.measured;
  return absl::StrCat("{\"executor\": \"", BackendName(m.executor), "\", \"runs\": ", m.runs,
                      ", \"before_ms\": ", m.before_seconds * 1e3, ", \"after_ms\": ", m.after_seconds * 1e3,
                      ", \"seconds\": ", m.seconds, "}");
}

std::string JsonRegionEstimate(const PipelineResult& r) {
  if (!r.region_estimate) return "null";
  const PipelineResult::RegionEstimate& e = *r.region_estimate;
  return absl::StrCat(
      "{\"nodes_before\": ", e.nodes_before, ", \"nodes_after\": ", e.nodes_after,
      ", \"region_nodes_before\": ", e.region_nodes_before, ", \"region_nodes_after\": ", e.region_nodes_after,
      ", \"before_ms\": ", e.timing.a_seconds * 1e3, ", \"after_ms\": ", e.timing.b_seconds * 1e3,
      ", \"spread\": ", e.timing.spread, ", \"pairs\": ", e.timing.pairs, ", \"input_ms\": ", e.share.a_seconds * 1e3,
      ", \"region_in_input_ms\": ", e.share.b_seconds * 1e3, ", \"share_spread\": ", e.share.spread,
      ", \"input_timed\": ", e.input_timed ? "true" : "false",
      ", \"input_written\": ", e.input_written ? "true" : "false", ", \"alike\": ", e.alike ? "true" : "false",
      ", \"cost_before_by_operators_ms\": ", e.cost_before_by_operators * 1e3,
      ", \"cost_after_by_operators_ms\": ", e.cost_after_by_operators * 1e3, "}");
}

std::string JsonSelfCheck(const PipelineResult& r) {
  if (!r.self_check) return "null";
  const SelfCheckCoverage& c = *r.self_check;
  std::vector<std::string> fed;
  for (const auto& [type, n] : c.fed_opaque) fed.push_back(absl::StrCat("\"", type, "\": ", n));
  return absl::StrCat("{\"max_abs_difference\": ", c.max_difference, ", \"random_inputs\": ", c.random_inputs,
                      ", \"outputs\": ", c.outputs, ", \"opaque_inputs\": ", c.opaque_inputs,
                      ", \"by_source\": ", c.by_source, ", \"library_nodes\": ", c.library_nodes,
                      ", \"library_nodes_run\": ", c.library_nodes_run, ", \"input_scales\": [",
                      absl::StrJoin(c.input_scales, ", "), "], \"fed_opaque\": {", absl::StrJoin(fed, ", "), "}}");
}

std::string JsonEndToEnd(const PipelineResult& r) {
  if (!r.end_to_end) return "null";
  const EndToEndCheck& e = *r.end_to_end;
  return absl::StrCat("{\"runtime\": ", JsonQuote(e.runtime), ", \"not_run\": ", JsonQuote(e.not_run),
                      ", \"input_scales\": [", absl::StrJoin(e.input_scales, ", "),
                      "], \"other_sizes\": ", JsonQuote(e.other_sizes), ", \"empty_sizes\": ", JsonQuote(e.empty_sizes),
                      ", \"outputs\": ", e.outputs, ", \"max_abs_difference\": ", e.max_difference,
                      ", \"worst\": ", JsonQuote(e.worst), ", \"worst_relative\": ", e.worst_relative,
                      ", \"worst_input_scale\": ", e.worst_input_scale, ", \"tolerance\": ", kOutputTolerance, "}");
}

// The prices that kept every rewrite out (PipelineResult::estimated_slower), or null.
std::string JsonEstimatedSlower(const PipelineResult& r) {
  if (!r.estimated_slower) return "null";
  return absl::StrCat("{\"rewritten_ms\": ", r.estimated_slower->rewritten_seconds * 1e3,
                      ", \"input_ms\": ", r.estimated_slower->input_seconds * 1e3, "}");
}

// Counts by name (of rules, or of operator types) as a JSON object.
std::string JsonCounts(const std::map<std::string, int>& by_name) {
  std::vector<std::string> counts;
  for (const auto& [name, n] : by_name) counts.push_back(absl::StrCat(JsonQuote(name), ": ", n));
  return absl::StrCat("{", absl::StrJoin(counts, ", "), "}");
}

// The opaque nodes by why they were left alone, then by operator type.
std::string JsonLeftAlone(const PipelineResult& r) {
  std::vector<std::string> reasons;
  for (const auto& [why, types] : r.left_alone)
    reasons.push_back(absl::StrCat(JsonQuote(why), ": ", JsonCounts(types)));
  return absl::StrCat("{", absl::StrJoin(reasons, ", "), "}");
}

std::string JsonStrings(const std::vector<std::string>& strings) {
  std::vector<std::string> quoted;
  for (const std::string& s : strings) quoted.push_back(JsonQuote(s));
  return absl::StrCat("[", absl::StrJoin(quoted, ", "), "]");
}

// The initializers the file also lists as graph inputs: a caller may feed them, so they
// are run-time values, never folded, merged or packed.
int WeightsAsInputs(const Graph& graph) {
  int n = 0;
  for (ValueId v : graph.inputs()) n += graph.value(v).is_weight();
  return n;
}

// The file's stale declarations, the first three named.
std::string StaleDeclarationsText(const std::vector<StaleDeclaration>& stale) {
  constexpr size_t kNamed = 3;
  std::vector<std::string> named;
  for (size_t i = 0; i < stale.size() && i < kNamed; ++i)
    named.push_back(absl::StrCat("'", stale[i].name, "' ", ShapeToString(stale[i].declared), " is ",
                                 ShapeToString(stale[i].computed)));
  if (stale.size() > kNamed) named.push_back(absl::StrCat("and ", stale.size() - kNamed, " more"));
  return absl::StrCat(
      stale.size(), stale.size() == 1 ? " shape the file declares contradicts" : " shapes the file declares contradict",
      " what their inputs give (stale, as after an edit of an input's "
      "shape): ",
      absl::StrJoin(named, ", "),
      "; read by what the inputs give, as ONNX Runtime reads them (value_info left out, graph "
      "outputs written at the shapes computed)");
}

// The stale declarations as JSON objects.
std::string JsonStaleDeclarations(const std::vector<StaleDeclaration>& stale) {
  std::vector<std::string> items;
  for (const StaleDeclaration& s : stale)
    items.push_back(absl::StrCat("{\"name\": ", JsonQuote(s.name),
                                 ", \"declared\": ", JsonQuote(ShapeToString(s.declared)),
                                 ", \"computed\": ", JsonQuote(ShapeToString(s.computed)),
                                 ", \"graph_output\": ", s.graph_output ? "true" : "false", "}"));
  return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
}

// What the import did (ImportText), or null.
std::string JsonImport(const OnnxModel* imported, const PipelineResult& r) {
  if (imported == nullptr) return "null";
  const InlinedFunctions& f = imported->inlined_functions;
  return absl::StrCat(
      "{\"opset_read\": ", imported->converted_from_opset > 0 ? imported->converted_from_opset : imported->opset,
      ", \"opset_written\": ", r.model.opset,
      ", \"converted\": ", imported->converted_from_opset > 0 ? "true" : "false",
      ", \"function_calls_inlined\": ", f.calls, ", \"functions_inlined\": ", JsonStrings(f.functions),
      ", \"functions_kept\": ", JsonStrings(f.kept), ", \"weights_as_inputs\": ", WeightsAsInputs(imported->graph),
      ", \"shapeless_inputs\": ", JsonStrings(imported->shapeless_inputs),
      ", \"sparse_made_dense\": ", JsonStrings(imported->sparse_made_dense),
      ", \"stale_declarations\": ", JsonStaleDeclarations(imported->stale_declarations), "}");
}

}  // namespace

std::string SummaryText(const PipelineOptions& options, const PipelineResult& result, absl::string_view model_name) {
  if (result.nothing_to_optimize)
    return absl::StrFormat(
        "%s: %d nodes -> %d nodes; nothing could be optimized (no node computes with the "
        "library's operators); written as read, its constants as initializers\n%s%s",
        model_name, result.nodes_before, result.nodes_after, SymbolicLines(result),
        ChangeTable(options, result, model_name));
  return absl::StrCat(GraphLines(options, result, model_name), "target: ", TargetName(options.target), "\n",
                      SearchLines(options, result), CheckLines(options, result), SymbolicLines(result),
                      SpeedCheckLines(result), ChangeTable(options, result, model_name));
}

std::string ImportText(const OnnxModel& imported, const PipelineResult& result) {
  std::string text;
  if (imported.converted_from_opset > 0)
    absl::StrAppendFormat(&text,
                          "import: opset %d converted to opset %d by ONNX's version converter; written at opset %d\n",
                          imported.converted_from_opset, imported.opset, result.model.opset);
  const InlinedFunctions& inlined = imported.inlined_functions;
  if (inlined.calls > 0)
    absl::StrAppendFormat(&text, "import: %d call%s of the model's functions replaced by their nodes (%s)\n",
                          inlined.calls, inlined.calls == 1 ? "" : "s", absl::StrJoin(inlined.functions, ", "));
  for (const std::string& kept : inlined.kept)
    absl::StrAppend(&text, "import: calls of the model's function ", kept,
                    " kept as they are (opaque to the search)\n");
  if (const int n = WeightsAsInputs(imported.graph); n > 0)
    absl::StrAppend(&text, "import: ",
                    n == 1 ? "1 weight is also listed as a graph input"
                           : absl::StrCat(n, " weights are also listed as graph inputs"),
                    ", which a caller may feed: run-time values, never folded or merged (exported with "
                    "keep_initializers_as_inputs; without it they would be)\n");
  if (!imported.sparse_made_dense.empty())
    absl::StrAppend(&text, "import: sparse initializer", imported.sparse_made_dense.size() == 1 ? " '" : "s '",
                    absl::StrJoin(imported.sparse_made_dense, "', '"),
                    "' read as dense and written so (the search and the kernels read dense weights)\n");
  if (!imported.stale_declarations.empty())
    absl::StrAppend(&text, "import: ", StaleDeclarationsText(imported.stale_declarations), "\n");
  for (const std::string& name : imported.shapeless_inputs)
    absl::StrAppend(&text, "import: input '", name,
                    "' declares no shape in the file; built at the shape --input-shape gives it, and written with "
                    "that rank, each dimension as the symbolic check below decides\n");
  return text;
}

std::string JsonReport(const PipelineOptions& options, const PipelineResult& r, const OnnxModel* imported) {
  const SearchFound& search = r.search;
  const SearchStop stop = StopOf(r);
  const PipelineResult::Layouts layouts = r.layouts.value_or(PipelineResult::Layouts{});
  return absl::StrCat(
      "{\n  \"import\": ", JsonImport(imported, r), ",\n  \"nodes_before\": ", r.nodes_before,
      ",\n  \"nodes_after\": ", r.nodes_after, ",\n  \"left_alone\": ", JsonLeftAlone(r), ",\n  \"backend\": \"",
      BackendName(options.backend), "\",\n  \"search\": \"", SearchKindName(options.search),
      "\",\n  \"rule_instances\": ", r.rule_instances, ",\n  \"rule_instances_unusable\": ", r.rule_instances_unusable,
      ",\n  \"target\": \"", TargetName(options.target), "\",\n  \"search_engine\": \"",
      SearchEngineName(options.engine), "\",\n  \"egraph\": ", JsonEGraph(r),
      ",\n  \"blocked_nodes\": ", layouts.blocked_nodes, ",\n  \"layout_conversions\": ", layouts.conversions,
      ",\n  \"cost_before_ms\": ", r.cost_before * 1e3, ",\n  \"cost_after_ms\": ", r.cost_after * 1e3,
      ",\n  \"region_estimate\": ", JsonRegionEstimate(r), ",\n  \"estimated_slower\": ", JsonEstimatedSlower(r),
      ",\n  \"search_cost_before_ms\": ", search.initial_cost * 1e3,
      ",\n  \"search_cost_after_ms\": ", search.best_cost * 1e3, ",\n  \"search_seconds\": ", search.seconds,
      ",\n  \"expansions\": ", JsonCount(r, &BacktrackingStats::expansions),
      ",\n  \"graphs_seen\": ", JsonCount(r, &BacktrackingStats::graphs_seen),
      ",\n  \"stopped_by_limit\": ", stop.by_limit ? "true" : "false", ",\n  \"stop_reason\": \"", stop.reason,
      "\",\n  \"self_check\": ", JsonSelfCheck(r), ",\n  \"end_to_end\": ", JsonEndToEnd(r),
      ",\n  \"measured\": ", JsonMeasured(r), ",\n  \"speed_check\": ", JsonSpeedCheck(r),
      ",\n  \"speed_not_verified\": ", r.speed_not_verified.empty() ? "null" : JsonQuote(r.speed_not_verified),
      ",\n  \"rules_applied\": ", JsonCounts(search.rules_applied),
      ",\n  \"rules_rejected_by_self_check\": ", JsonCounts(r.rejected_rules),
      ",\n  \"symbolic_dims\": ", JsonSymbolicDims(r), "\n}\n");
}

std::string JsonNotOptimizedReport(absl::string_view reason) {
  return absl::StrCat("{\n  \"not_optimized\": ", JsonQuote(reason), ",\n  \"written_as_read\": true\n}\n");
}

}  // namespace taso
