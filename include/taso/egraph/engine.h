// The equality-saturation search engine (Tensat): the graph's e-graph saturated with
// the rules, then the cheapest acyclic graph extracted from it. Its result is what every
// engine finds (taso::SearchFound) with the e-graph's own figures.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "taso/egraph/saturate.h"
#include "taso/rewrite/cost.h"
#include "taso/rewrite/search.h"

namespace taso::egraph {

struct EGraphStats {
  SaturationStats saturation;  // both phases
  SaturationStats joining;     // the first phase: the rules that join work (SaturateJoiningFirst)
  int64_t enodes = 0, eclasses = 0, approx_bytes = 0;  // when saturation stopped
  // "greedy+local", "ilp" (the integer program's choice), or "none" when the input
  // graph was kept.
  std::string extractor;
  // The integer program: "optimal", "time limit (better than greedy)", "no better than
  // greedy" (stopped by time), "too large" (not built), "not run (no time left)"; the DAG costs (by the e-node
  // prices) of the local search's choice and of the program's (the local search's
  // where the program found nothing better).
  std::string exact;
  double greedy_cost = 0, exact_cost = 0;
  double extraction_seconds = 0;
  // Operators priced by the analytic model and, of those, priced by the backend's cost
  // model (PriceWithPruning); both 0 when the backend's model is the analytic one.
  int64_t priced_operators = 0, measured_operators = 0;
  // Why the input graph was kept (extraction failed, or its graph costs no less); empty
  // when the extracted graph is the result.
  std::string kept_input_because;
  // The figures above are the first round's; these the rounds after it, each from the
  // graph the rounds before it found (EGraphOptions::max_rounds).
  std::vector<EGraphStats> later_rounds;
};

// Another extraction of the same e-graph, by other prices, for a speed check to time when
// the result turns out not faster in the runtime: prices measured one operator at a time
// miss what the runtime fuses across operators (a Transpose into the product after it)
// and what it gains from fewer, larger operators (Q, K and V projections merged), so the
// analytic model's choices are second opinions worth timing.
struct Alternative {
  Graph graph;
  std::map<std::string, int> rules_applied;
  // The cost model whose prices chose it: "analytic", or kOperatorsCountedPricing.
  std::string pricing;
};

// The pricing of the analytic model's extraction with each operator at the mean price
// the search's cost model gives the input's operators (OperatorsAtMeanPrice in cost.h).
inline constexpr absl::string_view kOperatorsCountedPricing = "analytic, operators at their mean price";

struct EGraphSearchResult : SearchFound {
  // best: the extracted graph as it will run, its weight-only operators folded into
  // weights (the graph priced, as the e-node prices assume; the input where none is
  // cheaper); best_cost and initial_cost: by `graph_cost`, weights so folded;
  // rules_applied: the rules that made the chosen e-nodes; path: empty (the extraction is
  // one rewrite).
  EGraphStats stats;
  // Where `node_cost` is not the analytic model, in the order the speed check tries them:
  // the analytic model's extraction, and the analytic model's with each operator at
  // `node_cost`'s mean price of the input's operators, each where it differs from
  // `best` and the one before it and costs less than the input by the model that chose it.
  std::vector<Alternative> alternatives;
};

// What extraction may take after saturation, so that a search ends within
// SaturationLimits::time_limit and `seconds` more: operators are measured for part of it
// (those left keep their scaled analytic prices), and the local searches and the integer
// program stop at it, `alternative_seconds` before it where the analytic model's
// extractions follow (which the speed check falls back on: they have that much at least).
struct ExtractionLimits {
  double seconds = 3;
  double alternative_seconds = 1;
  double measuring_seconds = 1.5;   // measuring operators' prices, at most
  double dag_greedy_seconds = 1.5;  // the greedy extraction by DAG costs, at most
  double improve_seconds = 2;       // each local search after a greedy extraction, at most
  // The integer program: built on at most this many e-nodes, solved for at most this long.
  int64_t max_exact_enodes = 5000;
  double exact_seconds = 1.5;
  // Local searches at most after the first extraction that have the e-nodes it chose
  // measured, and the time they all end within (each within improve_seconds too).
  int pricing_rounds = 4;
  double pricing_rounds_seconds = 2;
};

// The engine's options: when saturation stops, which rules apply when, and what
// extraction may take.
struct EGraphOptions {
  SaturationLimits limits;
  RuleScheduler scheduler;
  ExtractionLimits extraction;
  // Rounds at most: a round after the first starts from the graph the rounds before it
  // found, with a new e-graph, where the last one filled up (by e-nodes or memory) before
  // it saturated and changed the graph. Each round has the limits above. A LoRA attention's
  // e-graph fills up once its adapters are folded and two of its three projections merged;
  // the second round merges the third.
  int max_rounds = 2;
};

// `node_cost` prices single e-nodes for extraction; `graph_cost` prices the input and
// the extracted graph (at their layouts, say). The result is never costlier than the
// input by `graph_cost`. Pricing the input and saturation take `options.limits.time_limit`
// (the saturation at least half of it), extraction `options.extraction.seconds` more; a
// later round (EGraphOptions::max_rounds) half the first's saturation time and as long
// an extraction. Its graph is the result where it costs less; its other extractions follow
// the first round's, with the first round's rules counted in theirs.
EGraphSearchResult OptimizeWithEGraph(const Graph& graph, const std::vector<RuleMatcher>& rules, CostModel& node_cost,
                                      CostModel& graph_cost, const EGraphOptions& options = {});

}  // namespace taso::egraph
