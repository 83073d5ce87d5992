#include "taso/egraph/engine.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "taso/egraph/extract.h"
#include "taso/egraph/join_pieces.h"
#include "taso/ir/status_macros.h"
#include "taso/passes/fold.h"

namespace taso::egraph {

namespace {

using Clock = std::chrono::steady_clock;

// A point in time that stages stop at.
class Deadline {
 public:
  explicit Deadline(double seconds)
      : end_(Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds))) {}
  Clock::time_point end() const { return end_; }
  // Seconds left, at most `cap`; 0 once passed.
  double Left(double cap) const {
    return std::clamp(std::chrono::duration<double>(end_ - Clock::now()).count(), 0.0, cap);
  }

 private:
  Clock::time_point end_;
};

double SecondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

constexpr absl::string_view ExactStatusName(ExactStatus status) {
  switch (status) {
    case ExactStatus::kOptimal:
      return "optimal";
    case ExactStatus::kTimeLimit:
      return "time limit (better than greedy)";
    case ExactStatus::kNoBetter:
      return "no better than greedy";
    case ExactStatus::kTooLarge:
      return "too large";
  }
  return "?";
}

// The graph's computed outputs: what extraction must not answer with a leaf.
std::vector<ClassId> Roots(const Graph& graph, const GraphEGraph& built) {
  std::vector<ClassId> roots;
  for (ValueId v : graph.outputs())
    if (graph.value(v).producer != kNoNode) roots.push_back(built.value_class[v]);
  return roots;
}

std::map<std::string, int> RulesApplied(const Graph& graph, const GraphEGraph& built, const Extraction& ex,
                                        const std::vector<RuleMatcher>& rules) {
  absl::flat_hash_set<int32_t> counted;  // an application adds several e-nodes: count it once
  std::map<std::string, int> applied;
  for (ENodeId n : UsedENodes(graph, built, ex)) {
    const RuleApplication& made_by = built.egraph.node(n).made_by;
    if (made_by.rule >= 0 && counted.insert(made_by.application).second) ++applied[rules[made_by.rule].rule().name];
  }
  return applied;
}

// Greedy extractions by tree and by DAG costs, the cheaper improved by local search;
// `extractor` names it. The greedy one by tree costs is made whatever the deadline.
absl::StatusOr<Extraction> FastExtraction(const EGraph& eg, const std::vector<double>& prices,
                                          const std::vector<ClassId>& roots, const Deadline& deadline,
                                          const ExtractionLimits& limits, std::string& extractor) {
  ASSIGN_OR_RETURN(Extraction ex, ExtractGreedy(eg, prices, roots));
  extractor = "greedy+local";
  if (std::optional<Extraction> dag = ExtractGreedyDag(eg, prices, roots, deadline.Left(limits.dag_greedy_seconds)))
    if (DagCost(eg, prices, roots, dag->choice) < DagCost(eg, prices, roots, ex.choice)) {
      ex = *std::move(dag);
      extractor = "greedy-dag+local";
    }
  ImproveExtraction(eg, prices, roots, ex, deadline.Left(limits.improve_seconds));
  return ex;
}

// The integer program on the near-optimal e-nodes where it is small enough, in place of
// `fast` when it does better.
Extraction WithExact(const EGraph& eg, const std::vector<double>& prices, const std::vector<ClassId>& roots,
                     Extraction fast, const Deadline& deadline, const ExtractionLimits& limits, EGraphStats& stats,
                     std::string& extractor) {
  stats.greedy_cost = DagCost(eg, prices, roots, fast.choice);
  stats.exact = "not run (no time left)";
  stats.exact_cost = stats.greedy_cost;
  const double seconds = deadline.Left(limits.exact_seconds);
  if (seconds <= 0) return fast;
  ExactExtraction exact =
      ExtractExact(eg, prices, roots, NearOptimalENodes(eg, prices, roots), fast, limits.max_exact_enodes, seconds);
  stats.exact = std::string(ExactStatusName(exact.status));
  stats.exact_cost = exact.cost;
  if (exact.extraction.choice.empty()) return fast;
  extractor = "ilp";
  return std::move(exact.extraction);
}

absl::StatusOr<Extraction> ChooseExtraction(const EGraph& eg, const std::vector<double>& prices,
                                            const std::vector<ClassId>& roots, const Deadline& deadline,
                                            const ExtractionLimits& limits, EGraphStats& stats,
                                            std::string& extractor) {
  ASSIGN_OR_RETURN(Extraction fast, FastExtraction(eg, prices, roots, deadline, limits, extractor));
  return WithExact(eg, prices, roots, std::move(fast), deadline, limits, stats, extractor);
}

// The e-nodes an extraction chose.
std::vector<ENodeId> Chosen(const Extraction& ex) {
  std::vector<ENodeId> chosen;
  for (ClassId c : ex.order) chosen.push_back(ex.choice[c]);
  return chosen;
}

// Extraction at `node_cost`'s prices. A measured model prices first the e-nodes the
// analytic model finds near-optimal (PrunedPricing), among each class's neighbours in
// `graph` (PricingContext); e-nodes a fast extraction then chooses that were priced by
// scaling are measured and the local search goes on from its choice at the new prices,
// until it chooses measured ones only (or limits.pricing_rounds pass, or its seconds,
// within which they end). The integer program comes last, at the final prices.
absl::StatusOr<Extraction> ExtractAtPrices(const Graph& graph, const EGraph& eg, CostModel& node_cost,
                                           const std::vector<ClassId>& roots, const Deadline& deadline,
                                           const ExtractionLimits& limits, EGraphStats& stats, std::string& extractor) {
  AnalyticCost analytic;
  if (node_cost.name() == analytic.name())
    return ChooseExtraction(eg, PriceENodes(eg, node_cost), roots, deadline, limits, stats, extractor);
  const UseIndex uses(graph);
  const PricingContext context{&graph, &uses};
  PrunedPricing pricing(eg, analytic, node_cost, roots, &context, Deadline(limits.measuring_seconds).end());
  const Deadline rounds_end(limits.pricing_rounds_seconds);
  absl::StatusOr<Extraction> ex = FastExtraction(eg, pricing.prices(), roots, deadline, limits, extractor);
  for (int round = 0;
       ex.ok() && round < limits.pricing_rounds && rounds_end.Left(1) > 0 && pricing.MeasureToo(Chosen(*ex)) > 0;
       ++round)
    ImproveExtraction(eg, pricing.prices(), roots, *ex,
                      std::min(rounds_end.Left(limits.improve_seconds), deadline.Left(limits.improve_seconds)));
  stats.priced_operators = pricing.stats().priced;
  stats.measured_operators = pricing.stats().measured;
  if (!ex.ok()) return ex;
  return WithExact(eg, pricing.prices(), roots, *std::move(ex), deadline, limits, stats, extractor);
}

// The analytic model's extraction by `analytic`'s prices, when it chooses a graph that
// is not in `offered` (whose hashes it joins) and that `analytic` finds cheaper than the
// input; made within what is left before `deadline`.
std::optional<Alternative> AnalyticAlternative(const Graph& graph, const GraphEGraph& built,
                                               const std::vector<RuleMatcher>& rules, const std::vector<ClassId>& roots,
                                               AnalyticCost& analytic, const std::string& pricing,
                                               absl::flat_hash_set<uint64_t>& offered, const Deadline& deadline,
                                               const ExtractionLimits& limits) {
  const std::vector<double> prices = PriceENodes(built.egraph, analytic);
  EGraphStats unused;
  std::string extractor;
  absl::StatusOr<Extraction> ex = ChooseExtraction(built.egraph, prices, roots, deadline, limits, unused, extractor);
  if (!ex.ok()) return std::nullopt;
  absl::StatusOr<Graph> extracted = ExtractedGraph(graph, built, *ex);
  if (!extracted.ok() || analytic.TotalCost(*extracted) >= analytic.TotalCost(graph) ||
      !offered.insert(extracted->StructuralHash()).second)
    return std::nullopt;
  return Alternative{std::move(*extracted), RulesApplied(graph, built, *ex, rules), pricing};
}

// The second opinions on `result.best` (the extraction at `target`'s prices),
// added to `result.alternatives` in the order the speed check times them, each made in
// half of what is left before `deadline` and the last in all of it: the analytic model's
// extraction, then the analytic model's with each operator at `target`'s mean price
// (OperatorsAtMeanPrice), where they differ from the graphs before them and from `chosen`
// (the hash of the extraction returned, as extracted, before its weights were folded).
void OfferAnalyticAlternatives(const Graph& graph, const GraphEGraph& built, const std::vector<RuleMatcher>& rules,
                               const std::vector<ClassId>& roots, CostModel& target, uint64_t chosen,
                               const Deadline& deadline, const ExtractionLimits& limits, EGraphSearchResult& result) {
  AnalyticCost plain;
  AnalyticCost counted(OperatorsAtMeanPrice(target, graph));
  const std::pair<AnalyticCost*, std::string> opinions[] = {{&plain, plain.name()},
                                                            {&counted, std::string(kOperatorsCountedPricing)}};
  absl::flat_hash_set<uint64_t> offered = {chosen};
  for (size_t i = 0; i < std::size(opinions); ++i) {
    const bool last = i + 1 == std::size(opinions);
    const double left = deadline.Left(limits.seconds);
    auto alternative = AnalyticAlternative(graph, built, rules, roots, *opinions[i].first, opinions[i].second, offered,
                                           Deadline(last ? left : left / 2), limits);
    if (alternative) result.alternatives.push_back(std::move(*alternative));
  }
}

// A graph's cost as it will run: its weight-only operators folded into weights first, as
// the e-node prices assume (a runtime prepares an initializer once, and reads a fed
// weight, such as a regrouped convolution's unfolded block-diagonal one, on every run).
// `graph` as it will run: its weight-only operators folded into weights (`graph` itself
// where they cannot be).
Graph AsRun(const Graph& graph) {
  absl::StatusOr<Graph> folded = FoldWeights(graph);
  return folded.ok() ? *std::move(folded) : graph;
}

// Extracts the cheapest graph it can and keeps it when it costs less than the input.
void Extract(const Graph& graph, const GraphEGraph& built, const std::vector<RuleMatcher>& rules, CostModel& node_cost,
             CostModel& graph_cost, const ExtractionLimits& limits, EGraphSearchResult& result) {
  const auto start = Clock::now();
  const bool with_alternative = node_cost.name() != AnalyticCost().name();
  const Deadline deadline(limits.seconds - (with_alternative ? limits.alternative_seconds : 0));
  EGraphStats& stats = result.stats;
  stats.extractor = "none";
  const std::vector<ClassId> roots = Roots(graph, built);
  std::string extractor;
  auto ex = ExtractAtPrices(graph, built.egraph, node_cost, roots, deadline, limits, stats, extractor);
  absl::StatusOr<Graph> extracted = ex.ok() ? ExtractedGraph(graph, built, *ex) : absl::StatusOr<Graph>(ex.status());
  uint64_t chosen = graph.StructuralHash();  // the graph returned, as extracted
  if (!extracted.ok()) {
    stats.kept_input_because = std::string(extracted.status().message());
  } else {
    // The graph priced is the graph returned: folded once, here.
    Graph as_run = AsRun(*extracted);
    const double cost = graph_cost.TotalCost(as_run);
    if (cost >= result.initial_cost) {
      stats.kept_input_because = "the extracted graph costs no less than the input";
    } else {
      stats.extractor = extractor;
      chosen = extracted->StructuralHash();
      result.best = std::move(as_run);
      result.best_cost = cost;
      result.rules_applied = RulesApplied(graph, built, *ex, rules);
    }
  }
  if (with_alternative)
    OfferAnalyticAlternatives(graph, built, rules, roots, node_cost, chosen,
                              Deadline(std::max(limits.seconds - SecondsSince(start), limits.alternative_seconds)),
                              limits, result);
  stats.extraction_seconds = SecondsSince(start);
}

// One round: `graph`'s e-graph saturated, then extracted (Extract).
EGraphSearchResult SearchRound(const Graph& graph, const std::vector<RuleMatcher>& rules, CostModel& node_cost,
                               CostModel& graph_cost, const EGraphOptions& options) {
  const SaturationLimits& limits = options.limits;
  const auto start = Clock::now();
  EGraphSearchResult result;
  result.best = graph;
  result.initial_cost = result.best_cost = graph_cost.TotalCost(AsRun(graph));
  auto built = BuildEGraph(graph);
  if (!built.ok()) {
    result.stats.extractor = "none";
    result.stats.saturation.stop = result.stats.joining.stop = SaturationStop::kNotBuilt;
    result.stats.kept_input_because = std::string(built.status().message());
  } else {
    EGraphStats& stats = result.stats;
    // Pricing the input counts against the saturation's time, which keeps half of it.
    SaturationLimits within = limits;
    within.time_limit = std::max(limits.time_limit / 2, limits.time_limit - SecondsSince(start));
    std::tie(stats.joining, stats.saturation) = SaturateJoiningFirst(built->egraph, rules, within, options.scheduler);
    // The joined Splits get room of their own: saturation mostly stops at the e-node
    // limit, and without them no local move switches all eight pieces of a merge at
    // once. The joined Concats only price nested ones as one, and a wide merge makes
    // many (60,000 on eight task heads, which doubled Inception-v3's extraction time):
    // they stay within the limit.
    AddJoinedPieces(built->egraph, built->egraph.num_enodes() + limits.max_enodes, limits.max_enodes);
    stats.enodes = built->egraph.num_enodes();
    stats.eclasses = built->egraph.num_classes();
    stats.approx_bytes = built->egraph.ApproxBytes();
    Extract(graph, *built, rules, node_cost, graph_cost, options.extraction, result);
  }
  result.seconds = SecondsSince(start);
  return result;
}

// Whether a round's graph is worth a round of its own: the e-graph filled up (by e-nodes
// or memory) before saturating, so rewrites that need the round's rewrites made first
// (a merge of products whose adapters the round folded) may never have been reached,
// and the round changed the graph. Not where time stopped it: the e-graphs of large
// models, whose second round would take as long again.
bool WorthAnotherRound(const EGraphStats& round) {
  const SaturationStop stop = round.saturation.stop;
  return (stop == SaturationStop::kNodes || stop == SaturationStop::kMemory) && round.extractor != "none";
}

const EGraphStats& LastRound(const EGraphStats& stats) {
  return stats.later_rounds.empty() ? stats : stats.later_rounds.back();
}

std::map<std::string, int> Sum(std::map<std::string, int> a, const std::map<std::string, int>& b) {
  for (const auto& [rule, n] : b) a[rule] += n;
  return a;
}

// `next`, a round from `result.best`, taken into `result`: its graph where cheaper, its
// other extractions after `result`'s, each counting the rules that made `result.best`.
// Whether its graph was taken.
bool TakeRound(EGraphSearchResult next, EGraphSearchResult& result) {
  for (Alternative& alternative : next.alternatives) {
    alternative.rules_applied = Sum(std::move(alternative.rules_applied), result.rules_applied);
    result.alternatives.push_back(std::move(alternative));
  }
  result.stats.later_rounds.push_back(next.stats);
  if (next.stats.extractor == "none" || next.best_cost >= result.best_cost) return false;
  result.best = std::move(next.best);
  result.best_cost = next.best_cost;
  result.rules_applied = Sum(std::move(result.rules_applied), next.rules_applied);
  return true;
}

}  // namespace

EGraphSearchResult OptimizeWithEGraph(const Graph& graph, const std::vector<RuleMatcher>& rules, CostModel& node_cost,
                                      CostModel& graph_cost, const EGraphOptions& options) {
  const auto start = Clock::now();
  EGraphSearchResult result = SearchRound(graph, rules, node_cost, graph_cost, options);
  // A later round refines what the first found: it saturates for half the time.
  EGraphOptions later = options;
  later.limits.time_limit = options.limits.time_limit / 2;
  bool taken = true;
  for (int round = 1; taken && round < options.max_rounds && WorthAnotherRound(LastRound(result.stats)); ++round)
    taken = TakeRound(SearchRound(result.best, rules, node_cost, graph_cost, later), result);
  result.seconds = SecondsSince(start);
  return result;
}

}  // namespace taso::egraph
