// The e-graph engine: the e-graph's invariants, the limits, determinism, and rewrites the
// backtracking search cannot reach.
#include <catch2/catch.hpp>

#include <chrono>
#include <variant>

#include "absl/strings/str_cat.h"
#include "rule_lookup.h"
#include "taso/egraph/ematch.h"
#include "taso/egraph/engine.h"
#include "taso/egraph/extract.h"
#include "taso/ir/ops/names.h"
#include "taso/passes/fold.h"
#include "taso/pipeline/pipeline.h"
#include "taso/rewrite/search.h"
#include "test_util.h"

namespace taso {
namespace {

using egraph::ClassId;
using egraph::EGraph;
using egraph::ENodeId;
using testing::AddOp;
using testing::AddWeight;
using testing::CountOps;
using testing::ShippedRules;

const std::vector<RuleMatcher>& AllMatchers() {
  static const std::vector<RuleMatcher> matchers = PrepareRules(ShippedRules().rules);
  return matchers;
}

// Prices a Split as a view (free), as the cpu backend measures it; the rest analytically.
class ViewSplitCost : public AnalyticCost {
 public:
  double NodeCost(const Graph& graph, NodeId n) override {
    return graph.node(n).op == testing::Op(op_names::kSplit) ? 0 : AnalyticCost::NodeCost(graph, n);
  }
};

void ExpectSameOutputs(const Graph& a, const Graph& b) {
  const TensorMap inputs = RandomInputs(a, 7);
  auto ra = RunReference(a, inputs);
  auto rb = RunReference(b, inputs);
  REQUIRE(ra.ok());
  REQUIRE(rb.ok());
  CHECK(RelativeDifference(*ra, *rb) < 1e-4);
}

// x [256, 64] -> x.W + (x.A).B: a linear layer with an unmerged low-rank adapter (d = 64,
// r = 4), over a sequence of 256 tokens.
Graph AdapterLayer() {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {256, 64});
  const ValueId w = AddWeight(g, "W", {64, 64}, 1), a = AddWeight(g, "A", {64, 4}, 2),
                b = AddWeight(g, "B", {4, 64}, 3);
  const ValueId base = AddOp(g, op_names::kMatMul, {x, w}, "base");
  const ValueId low = AddOp(g, op_names::kMatMul, {AddOp(g, op_names::kMatMul, {x, a}, "xa"), b}, "xab");
  REQUIRE(g.AddOutput(AddOp(g, op_names::kAdd, {base, low}, "y")).ok());
  return g;
}

egraph::EGraphSearchResult RunEngine(const Graph& g, const std::vector<RuleMatcher>& rules,
                                     egraph::SaturationLimits limits = {}) {
  AnalyticCost cost;
  egraph::EGraphOptions options;
  options.limits = limits;
  return egraph::OptimizeWithEGraph(g, rules, cost, cost, options);
}

// The engine's graph for `g` with all shipped rules, weights folded; fails the test where
// the engine kept the input.
Graph FoldedEngineResult(const Graph& g, egraph::EGraphSearchResult& found) {
  found = RunEngine(g, AllMatchers());
  INFO(found.stats.kept_input_because);
  REQUIRE(found.stats.extractor != "none");
  auto folded = FoldWeights(found.best);
  REQUIRE(folded.ok());
  return *std::move(folded);
}

TEST_CASE("The e-graph engine merges a low-rank adapter that backtracking keeps", "[egraph]") {
  const Graph g = AdapterLayer();
  egraph::EGraphSearchResult found;
  const Graph folded = FoldedEngineResult(g, found);
  CHECK(CountOps(folded, op_names::kMatMul) == 1);
  CHECK(folded.num_nodes() == 1);
  CHECK(found.best_cost < found.initial_cost);
  ExpectSameOutputs(g, folded);

  AnalyticCost cost;
  SearchOptions options;  // alpha 1.05
  const SearchResult backtracking = Optimize(g, AllMatchers(), cost, options);
  CHECK(CountOps(backtracking.best, op_names::kMatMul) == 3);
}

// A linear layer as exporters write it (Gemm, B transposed, a bias) with a scaled rank-4
// adapter beside it, as PyTorch exports an unmerged LoRA layer.
Graph GemmAdapterLayer() {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {256, 64});
  const ValueId w = AddWeight(g, "W", {64, 64}, 1), bias = AddWeight(g, "bias", {64}, 4),
                a = AddWeight(g, "A", {64, 4}, 2), b = AddWeight(g, "B", {4, 64}, 3), s = AddWeight(g, "s", {}, 5);
  const ValueId base = AddOp(g, op_names::kGemm, {x, w, bias}, "base", Params().Set("transB", int64_t{1}));
  const ValueId low = AddOp(g, op_names::kMatMul, {AddOp(g, op_names::kMatMul, {x, a}, "xa"), b}, "xab");
  REQUIRE(g.AddOutput(AddOp(g, op_names::kAdd, {base, AddOp(g, op_names::kScalarMul, {low, s}, "scaled")}, "y")).ok());
  return g;
}

TEST_CASE("The e-graph engine folds a scaled adapter into a Gemm layer's weight", "[egraph]") {
  const Graph g = GemmAdapterLayer();
  egraph::EGraphSearchResult found;
  const Graph folded = FoldedEngineResult(g, found);
  CHECK(folded.num_nodes() == 1);
  CHECK(CountOps(folded, op_names::kGemm) == 1);
  ExpectSameOutputs(g, folded);
}

// Runs the engine on `g` (two outputs y1, y2 of one input) with Splits priced as views,
// and checks the result computes them with one `op` and a Split, outputs in order.
void ExpectMergedIntoOne(const Graph& g, const std::vector<RuleMatcher>& matchers, const std::string& op) {
  ViewSplitCost cost;
  egraph::EGraphSearchResult found = egraph::OptimizeWithEGraph(g, matchers, cost, cost, {});
  INFO(found.stats.kept_input_because);
  REQUIRE(found.stats.extractor != "none");
  auto folded = FoldWeights(found.best);
  REQUIRE(folded.ok());
  CHECK(CountOps(*folded, op) == 1);
  CHECK(CountOps(*folded, op_names::kSplit) == 1);
  CHECK(folded->value(folded->outputs()[0]).name == "y1");
  CHECK(folded->value(folded->outputs()[1]).name == "y2");
  ExpectSameOutputs(g, *folded);
}

TEST_CASE("The e-graph engine merges two products of one input", "[egraph]") {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {8, 64});
  const ValueId w1 = AddWeight(g, "W1", {64, 64}, 1), w2 = AddWeight(g, "W2", {64, 64}, 2);
  REQUIRE(g.AddOutput(AddOp(g, op_names::kMatMul, {x, w1}, "y1")).ok());
  REQUIRE(g.AddOutput(AddOp(g, op_names::kMatMul, {x, w2}, "y2")).ok());
  ExpectMergedIntoOne(g, AllMatchers(), op_names::kMatMul);
}

// Both shipped databases, as taso-opt reads them by default.
const std::vector<RuleMatcher>& MatchersWithMerges() {
  static const std::vector<RuleMatcher> matchers = [] {
    auto rules = CombineRuleDatabases(
        {{"taso_k3.pb", ShippedRules().rules}, {"gemm_merges_k4.pb", testing::ShippedMergeRules().rules}});
    REQUIRE(rules.ok());
    return PrepareRules(*rules);
  }();
  return matchers;
}

TEST_CASE("The e-graph engine merges two linear layers of one input, each with its bias", "[egraph]") {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {8, 64});
  const Params transposed = Params().Set("transB", int64_t{1});
  for (int k : {1, 2}) {
    const ValueId w = AddWeight(g, absl::StrCat("W", k), {64, 64}, k);
    const ValueId bias = AddWeight(g, absl::StrCat("b", k), {64}, 10 + k);
    REQUIRE(g.AddOutput(AddOp(g, op_names::kGemm, {x, w, bias}, absl::StrCat("y", k), transposed)).ok());
  }
  ExpectMergedIntoOne(g, MatchersWithMerges(), op_names::kGemm);
}

// Twelve products of one input (as per-head projections are written): saturation alone
// makes merges of at most eight in its three merge iterations, so all twelve become one
// product only by joining them along a chain first (SaturationLimits::join_wide_groups).
TEST_CASE("The e-graph engine merges twelve linear layers of one input into one", "[egraph]") {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {8, 64});
  const Params transposed = Params().Set("transB", int64_t{1});
  constexpr int kLayers = 12;
  for (int k = 0; k < kLayers; ++k) {
    const ValueId w = AddWeight(g, absl::StrCat("W", k), {16, 64}, k);
    const ValueId bias = AddWeight(g, absl::StrCat("b", k), {16}, 100 + k);
    REQUIRE(g.AddOutput(AddOp(g, op_names::kGemm, {x, w, bias}, absl::StrCat("y", k), transposed)).ok());
  }
  ViewSplitCost cost;
  egraph::EGraphSearchResult found = egraph::OptimizeWithEGraph(g, MatchersWithMerges(), cost, cost, {});
  INFO(found.stats.kept_input_because);
  REQUIRE(found.stats.extractor != "none");
  auto folded = FoldWeights(found.best);
  REQUIRE(folded.ok());
  CHECK(CountOps(*folded, op_names::kGemm) == 1);
  CHECK(CountOps(*folded, op_names::kSplit) == 1);
  for (int k = 0; k < kLayers; ++k) CHECK(folded->value(folded->outputs()[k]).name == absl::StrCat("y", k));
  // Twelve layers are one after eleven merges of two: the report counts applications, not
  // the e-nodes each adds (a Gemm and two concatenations).
  int applications = 0;
  for (const auto& [rule, n] : found.rules_applied) applications += n;
  CHECK(applications == kLayers - 1);
  ExpectSameOutputs(g, *folded);
}

TEST_CASE("The e-graph engine re-associates a chain of products to the cheaper order", "[egraph]") {
  const Graph g = testing::ProductChain();
  egraph::EGraphSearchResult found = RunEngine(g, AllMatchers());
  INFO(found.stats.kept_input_because);
  REQUIRE(found.stats.extractor != "none");
  const Graph& best = found.best;
  REQUIRE(CountOps(best, op_names::kMatMul) == 2);
  // x . (y . z): the inner product reads y and z, a [4, 4] result.
  bool inner_small = false;
  for (NodeId n = 0; n < best.num_nodes(); ++n) inner_small |= best.value(best.node(n).outputs[0]).shape == Shape{4, 4};
  CHECK(inner_small);
  CHECK(found.best_cost < found.initial_cost / 4);
  ExpectSameOutputs(g, best);
}

TEST_CASE("E-graph: the analytic model's extraction is offered where other prices chose differently", "[egraph]") {
  // By node count both orders of the chain cost alike, so the input is kept; the analytic
  // model re-associates it.
  const Graph g = testing::ProductChain();
  testing::NodeCountCost count;
  const egraph::EGraphSearchResult found = egraph::OptimizeWithEGraph(g, AllMatchers(), count, count, {});
  CHECK(found.rules_applied.empty());
  REQUIRE(found.alternatives.size() == 1);
  const egraph::Alternative& alternative = found.alternatives[0];
  CHECK(alternative.pricing == "analytic");
  CHECK_FALSE(alternative.rules_applied.empty());
  AnalyticCost analytic;
  CHECK(analytic.TotalCost(alternative.graph) < analytic.TotalCost(g) / 4);
  ExpectSameOutputs(g, alternative.graph);

  // Priced by the analytic model itself, there is no second opinion to offer.
  CHECK(RunEngine(g, AllMatchers()).alternatives.empty());
}

// A runtime whose operators each cost 10 us whatever their work, and whose Split copies
// its pieces at 100 us: by its prices, merging three products into one and a Split saves
// nothing.
class CostlySplitRuntime : public CostModel {
 public:
  std::string name() const override { return "costly-split"; }
  double NodeCost(const Graph& graph, NodeId n) override {
    return graph.node(n).op == testing::Op(op_names::kSplit) ? 1e-4 : 1e-5;
  }
};

TEST_CASE("E-graph: the extraction that counts operators at their mean price is offered too", "[egraph]") {
  // Three linear layers of one input, as Q, K and V projections are written. The target's
  // prices and the analytic model's (2 us per operator, a Split's copy) keep them apart;
  // at the input's mean price per operator (10 us) one product and a Split cost less.
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {32, 64});
  const Params transposed = Params().Set("transB", int64_t{1});
  for (int k : {1, 2, 3}) {
    const ValueId w = AddWeight(g, absl::StrCat("W", k), {64, 64}, k);
    const ValueId bias = AddWeight(g, absl::StrCat("b", k), {64}, 10 + k);
    REQUIRE(g.AddOutput(AddOp(g, op_names::kGemm, {x, w, bias}, absl::StrCat("y", k), transposed)).ok());
  }
  CostlySplitRuntime runtime;
  CHECK(OperatorsAtMeanPrice(runtime, g).launch_seconds == Approx(1e-5));
  const egraph::EGraphSearchResult found = egraph::OptimizeWithEGraph(g, MatchersWithMerges(), runtime, runtime, {});
  CHECK(found.rules_applied.empty());
  REQUIRE(found.alternatives.size() == 1);
  const egraph::Alternative& alternative = found.alternatives[0];
  CHECK(alternative.pricing == egraph::kOperatorsCountedPricing);
  auto folded = FoldWeights(alternative.graph);
  REQUIRE(folded.ok());
  CHECK(CountOps(*folded, op_names::kGemm) == 1);
  CHECK(CountOps(*folded, op_names::kSplit) == 1);
  ExpectSameOutputs(g, *folded);
}

TEST_CASE("E-graph: hash-consing, merging and rebuilding keep congruence", "[egraph]") {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {4, 4});
  const ValueId y = *g.AddInput("y", DataType::kFloat32, {4, 4});
  const ValueId w = AddWeight(g, "w", {4, 4}, 1);
  const ValueId rx = AddOp(g, op_names::kRelu, {x}, "rx");
  const ValueId ry = AddOp(g, op_names::kRelu, {y}, "ry");
  REQUIRE(g.AddOutput(AddOp(g, op_names::kAdd, {rx, ry}, "out")).ok());
  REQUIRE(g.AddOutput(AddOp(g, op_names::kRelu, {w}, "rw")).ok());
  auto built = egraph::BuildEGraph(g);
  REQUIRE(built.ok());
  EGraph& eg = built->egraph;
  const std::vector<ClassId>& cls = built->value_class;
  const int64_t nodes = eg.num_enodes();
  // Adding an e-node again finds it.
  auto again = eg.AddOp(testing::Op(op_names::kRelu), {}, {cls[x]});
  REQUIRE(again.ok());
  CHECK((*again)[0] == eg.Find(cls[rx]));
  CHECK(eg.num_enodes() == nodes);
  // Weight-only: a weight, and what reads only weights.
  CHECK(eg.eclass(cls[w]).weight_only);
  CHECK(eg.eclass(cls[built->value_class[g.FindValue("rw")]]).weight_only);
  CHECK_FALSE(eg.eclass(cls[rx]).weight_only);
  // Classes of other types are never merged.
  auto wide = eg.AddOp(testing::Op(op_names::kConcat), Params().Set("axis", int64_t{0}), {cls[x], cls[y]});
  REQUIRE(wide.ok());
  CHECK_FALSE(eg.Merge((*wide)[0], cls[x]));
  // x = y makes Relu(x) = Relu(y) after rebuilding, and Add(rx, ry) reads one class twice.
  CHECK(eg.Merge(cls[x], cls[y]));
  CHECK(eg.Find(cls[rx]) != eg.Find(cls[ry]));
  eg.Rebuild();
  CHECK(eg.Find(cls[x]) == eg.Find(cls[y]));
  CHECK(eg.Find(cls[rx]) == eg.Find(cls[ry]));
  CHECK(eg.num_enodes() == nodes);  // the Concat added, Relu(y) merged into Relu(x)
  const egraph::ENode& add = eg.node(eg.NodesIn(cls[built->value_class[g.FindValue("out")]])[0]);
  CHECK(add.children[0] == add.children[1]);
  CHECK(eg.Parents(cls[rx]).size() == 1);  // the Add, listed once
  for (ENodeId n = 0; n < eg.num_node_ids(); ++n)
    if (eg.alive(n))
      for (ClassId c : eg.node(n).children) CHECK(c == eg.Find(c));
}

TEST_CASE("E-graph: a Split whose sizes a Constant node gives, as PyTorch exports chunk()", "[egraph]") {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {4, 6});
  auto sizes = g.AddNode(testing::Op(op_names::kConstant), Params().Set("value", TensorData::Int64({2}, {2, 4})), {});
  REQUIRE(sizes.ok());
  auto parts = g.AddNode(testing::Op(op_names::kSplit), Params().Set("axis", int64_t{1}), {x, (*sizes)[0]});
  REQUIRE(parts.ok());
  for (ValueId v : *parts) REQUIRE(g.AddOutput(AddOp(g, op_names::kRelu, {v}, "r" + g.value(v).name)).ok());
  auto built = egraph::BuildEGraph(g);
  INFO(built.status().message());
  REQUIRE(built.ok());  // the Split's shape rule reads the sizes from the Constant's class
  CHECK(built->egraph.eclass(built->value_class[(*sizes)[0]]).constant != nullptr);
  ExpectSameOutputs(g, RunEngine(g, AllMatchers()).best);
}

TEST_CASE("E-graph: each limit stops saturation and is reported", "[egraph]") {
  const Graph g = AdapterLayer();
  auto stop_with = [&](egraph::SaturationLimits limits) {
    egraph::EGraphSearchResult found = RunEngine(g, AllMatchers(), limits);
    CHECK(found.best_cost <= found.initial_cost);
    return found.stats;
  };
  egraph::SaturationLimits limits;
  limits.max_iterations = 1;
  CHECK(stop_with(limits).saturation.stop == egraph::SaturationStop::kIterations);
  limits = {};
  const egraph::EGraphStats saturated = stop_with(limits);
  limits.max_enodes = saturated.enodes / 2;
  const egraph::EGraphStats by_nodes = stop_with(limits);
  CHECK(by_nodes.saturation.stop == egraph::SaturationStop::kNodes);
  CHECK(by_nodes.saturation.iterations < saturated.saturation.iterations);
  limits = {};
  limits.max_bytes = 4096;
  CHECK(stop_with(limits).saturation.stop == egraph::SaturationStop::kMemory);
  limits = {};
  limits.time_limit = 1e-9;
  CHECK(stop_with(limits).saturation.stop == egraph::SaturationStop::kTime);
  CHECK(egraph::SaturationStopName(egraph::SaturationStop::kSaturated) == "saturated");
}

TEST_CASE("E-graph: a small rule set saturates", "[egraph]") {
  // Associativity of products alone: (x . y) . z and x . (y . z), then nothing changes.
  const Rule& assoc = testing::ShippedRuleLike("MatMul(C, MatMul(A, B))", "MatMul(MatMul(C, A), B)", 2);
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {256, 4});
  const ValueId y = *g.AddInput("y", DataType::kFloat32, {4, 256});
  const ValueId z = *g.AddInput("z", DataType::kFloat32, {256, 4});
  REQUIRE(g.AddOutput(AddOp(g, op_names::kMatMul, {AddOp(g, op_names::kMatMul, {x, y}, "xy"), z}, "out")).ok());
  egraph::EGraphSearchResult found = RunEngine(g, PrepareRules({assoc}));
  CHECK(found.stats.saturation.stop == egraph::SaturationStop::kSaturated);
  CHECK(found.stats.enodes == 3 + 4);  // three leaves, two products each way
  CHECK(found.best.value(found.best.outputs()[0]).name == "out");
  CHECK(found.rules_applied.size() == 1);
}

TEST_CASE("E-graph: a run is deterministic", "[egraph]") {
  const Graph g = AdapterLayer();
  egraph::SaturationLimits limits;  // a time limit would stop it where the machine's load says
  limits.max_iterations = 2;
  limits.time_limit = 3600;
  const egraph::EGraphSearchResult first = RunEngine(g, AllMatchers(), limits);
  const egraph::EGraphSearchResult second = RunEngine(g, AllMatchers(), limits);
  CHECK(first.stats.saturation.stop == egraph::SaturationStop::kIterations);
  CHECK(first.stats.enodes == second.stats.enodes);
  CHECK(first.stats.eclasses == second.stats.eclasses);
  CHECK(first.best.StructuralHash() == second.best.StructuralHash());
  CHECK(first.best.DebugString() == second.best.DebugString());
  CHECK(first.rules_applied == second.rules_applied);
}

TEST_CASE("E-graph: the pipeline runs the engine and refuses bad limits", "[egraph]") {
  OnnxModel model{AdapterLayer(), nullptr, 13};
  PipelineOptions options;
  options.backend = Backend::kAnalytic;
  options.search = SearchKind::kSubstitutions;
  options.cost_cache = "none";
  options.engine = SearchEngine::kEGraph;
  options.verify_speed = false;
  auto result = OptimizeModel(model, ShippedRules().rules, options);
  REQUIRE(result.ok());
  const auto* stats = std::get_if<egraph::EGraphStats>(&result->engine);
  REQUIRE(stats != nullptr);
  CHECK(CountOps(result->model.graph, op_names::kMatMul) == 1);
  CHECK(result->self_check.has_value());
  CHECK(JsonReport(options, *result).find("\"search_engine\": \"egraph\"") != std::string::npos);
  const std::string summary = SummaryText(options, *result, "adapter");
  CHECK_THAT(summary, Catch::Contains("search (substitutions, e-graph): ") && Catch::Contains("e-graph: "));
  CHECK_THAT(summary, !Catch::Contains("graphs expanded") && !Catch::Contains("--budget"));
  const std::string stop(egraph::SaturationStopName(stats->saturation.stop));
  CHECK_THAT(JsonReport(options, *result), Catch::Contains("\"stop_reason\": \"" + stop + "\""));
  // Saturation iterations are not graphs expanded.
  CHECK_THAT(JsonReport(options, *result), Catch::Contains("\"expansions\": null,\n  \"graphs_seen\": null,"));
  options.egraph.limits.max_enodes = 0;
  auto refused = OptimizeModel(model, ShippedRules().rules, options);
  REQUIRE_FALSE(refused.ok());
  CHECK(std::string(refused.status().message()).find("e-graph") != std::string::npos);
  CHECK(ParseSearchEngine("egraph") == SearchEngine::kEGraph);
  CHECK_FALSE(ParseSearchEngine("tensat").has_value());
}

// The e-node of `op` in class c.
ENodeId NodeOf(const EGraph& eg, ClassId c, const std::string& op) {
  for (ENodeId n : eg.NodesIn(c))
    if (eg.node(n).op == testing::Op(op)) return n;
  return egraph::kNoENode;
}

// An e-graph built by hand over one input x [8, 8], with the classes of S = x . x and of
// its two readers A = Relu(S) and B = Transpose(S).
struct SharedProduct {
  Graph g;
  EGraph eg;
  ClassId x, s, a, b;

  SharedProduct() {
    x = eg.AddLeaf(g, *g.AddInput("x", DataType::kFloat32, {8, 8}));
    s = Op(op_names::kMatMul, {x, x});
    a = Op(op_names::kRelu, {s});
    b = Op(op_names::kTranspose, {s}, Params().Set("perm", std::vector<int64_t>{1, 0}));
  }
  ClassId Op(const std::string& name, std::vector<ClassId> children, Params params = {}) {
    auto out = eg.AddOp(testing::Op(name), params, std::move(children));
    REQUIRE(out.ok());
    return (*out)[0];
  }
};

// out = A + B; A = Relu(S) or Add(x, x); B = Transpose(S) or Mul(x, x); S = x . x is
// priced 10, the alternatives 7, the rest 1.
struct SharedOrApart : SharedProduct {
  ClassId out;
  std::vector<double> prices;
  std::vector<ClassId> roots;

  SharedOrApart() {
    REQUIRE(eg.Merge(a, Op(op_names::kAdd, {x, x})));
    REQUIRE(eg.Merge(b, Op(op_names::kMul, {x, x})));
    out = Op(op_names::kAdd, {a, b});
    eg.Rebuild();
    prices.assign(eg.num_node_ids(), 0);
    prices[NodeOf(eg, s, op_names::kMatMul)] = 10;
    prices[NodeOf(eg, a, op_names::kRelu)] = prices[NodeOf(eg, b, op_names::kTranspose)] =
        prices[NodeOf(eg, out, op_names::kAdd)] = 1;
    prices[NodeOf(eg, a, op_names::kAdd)] = prices[NodeOf(eg, b, op_names::kMul)] = 7;
    roots = {out};
  }
};

TEST_CASE("E-graph: the integer program finds a shared subexpression greedy misses", "[egraph]") {
  // out = A + B; A = Relu(S) or Add(x, x); B = Transpose(S) or Mul(x, x); S = x . x is
  // dear (10), the alternatives cost 7, the rest 1. Greedy prices trees, so S counts
  // twice (A and B each take their 7) and no single move pays: 1 + 7 + 7 = 15. Sharing S
  // costs 1 + 1 + 1 + 10 = 13.
  SharedOrApart h;
  EGraph& eg = h.eg;
  const ClassId a = h.a, b = h.b;
  const std::vector<double>& prices = h.prices;
  const std::vector<ClassId>& roots = h.roots;
  auto greedy = egraph::ExtractGreedy(eg, prices, roots);
  REQUIRE(greedy.ok());
  egraph::ImproveExtraction(eg, prices, roots, *greedy, 1);
  CHECK(egraph::DagCost(eg, prices, roots, greedy->choice) == Approx(15));

  const std::vector<bool> all(eg.num_node_ids(), true);
  egraph::ExactExtraction exact = egraph::ExtractExact(eg, prices, roots, all, *greedy, 1000, 10);
  CHECK(exact.status == egraph::ExactStatus::kOptimal);
  CHECK(exact.cost == Approx(13));
  REQUIRE_FALSE(exact.extraction.choice.empty());
  CHECK(exact.extraction.choice[eg.Find(a)] == NodeOf(eg, a, op_names::kRelu));
  CHECK(exact.extraction.choice[eg.Find(b)] == NodeOf(eg, b, op_names::kTranspose));
  CHECK(exact.extraction.order.size() == 5);  // x, S, A, B, out

  // Too many e-nodes for the program: it is not built, and the incumbent stands.
  egraph::ExactExtraction skipped = egraph::ExtractExact(eg, prices, roots, all, *greedy, 2, 10);
  CHECK(skipped.status == egraph::ExactStatus::kTooLarge);
  CHECK(skipped.extraction.choice.empty());
}

TEST_CASE("E-graph: the integer program chooses no e-node whose operands it may not compute", "[egraph]") {
  // As above, but the program may use Relu(S) and Transpose(S) and not S itself (S = x . x
  // is not allowed): the cheap readers of S are out of reach, and the incumbent's Add and
  // Mul of x stand. A class needed with no allowed e-node once let the solver choose
  // nothing there, and pricing that choice crashed (torchvision's Swin-T).
  SharedOrApart h;
  EGraph& eg = h.eg;
  const ClassId s = h.s, a = h.a, b = h.b;
  const std::vector<double>& prices = h.prices;
  const std::vector<ClassId>& roots = h.roots;
  auto greedy = egraph::ExtractGreedy(eg, prices, roots);
  REQUIRE(greedy.ok());
  REQUIRE(greedy->choice[eg.Find(a)] == NodeOf(eg, a, op_names::kAdd));
  egraph::Extraction incumbent = *greedy;  // greedy chooses in every class; S is not used
  incumbent.choice[eg.Find(s)] = egraph::kNoENode;
  incumbent.order = egraph::TopologicalClasses(eg, roots, incumbent.choice);

  std::vector<bool> allowed(eg.num_node_ids(), false);
  allowed[NodeOf(eg, a, op_names::kRelu)] = allowed[NodeOf(eg, b, op_names::kTranspose)] = true;
  const egraph::ExactExtraction exact = egraph::ExtractExact(eg, prices, roots, allowed, incumbent, 1000, 10);
  CHECK(exact.cost == Approx(15));
  if (!exact.extraction.choice.empty()) CHECK(exact.extraction.choice[eg.Find(a)] == NodeOf(eg, a, op_names::kAdd));

  // A choice that reads a class it chooses nothing for is priced as no extraction.
  std::vector<ENodeId> partial = incumbent.choice;
  partial[eg.Find(a)] = NodeOf(eg, a, op_names::kRelu);
  CHECK(std::isinf(egraph::DagCost(eg, prices, roots, partial)));
}

TEST_CASE("E-graph: the integer program folds no weights it does not need", "[egraph]") {
  // out = x . W, or x . Transpose(Transpose(W)) (the rules' two transposes of a weight,
  // not known to be W): both free at run time, the transposes folded ahead of time; but
  // folding costs taso-opt time and memory (VGG-11 folded fourteen of a 411 MB weight),
  // so the program takes W as it is.
  Graph g;
  EGraph eg;
  const ClassId x = eg.AddLeaf(g, *g.AddInput("x", DataType::kFloat32, {8, 8}));
  const ClassId w = eg.AddLeaf(g, *g.AddWeight("w", TensorData::Float({8, 8}, std::vector<float>(64, 1.0f))));
  const Params swap = Params().Set("perm", std::vector<int64_t>{1, 0});
  auto op = [&](const std::string& name, std::vector<ClassId> children, Params params = {}) {
    auto out = eg.AddOp(testing::Op(name), params, std::move(children));
    REQUIRE(out.ok());
    return (*out)[0];
  };
  const ClassId twice = op(op_names::kTranspose, {op(op_names::kTranspose, {w}, swap)}, swap);
  const ClassId out = op(op_names::kMatMul, {x, w});
  REQUIRE(eg.Merge(out, op(op_names::kMatMul, {x, twice})));
  eg.Rebuild();
  REQUIRE(eg.eclass(eg.Find(twice)).weight_only);
  std::vector<double> prices(eg.num_node_ids(), 0);
  for (ENodeId n : eg.NodesIn(eg.Find(out))) prices[n] = 1;
  const std::vector<ClassId> roots = {out};
  auto greedy = egraph::ExtractGreedy(eg, prices, roots);
  REQUIRE(greedy.ok());
  egraph::Extraction folded = *greedy;  // the incumbent reads W through the transposes
  for (ENodeId n : eg.NodesIn(eg.Find(out)))
    if (eg.Find(eg.node(n).children[1]) == eg.Find(twice)) folded.choice[eg.Find(out)] = n;
  folded.order = egraph::TopologicalClasses(eg, roots, folded.choice);
  REQUIRE(folded.order.size() == 5);

  const std::vector<bool> all(eg.num_node_ids(), true);
  const egraph::ExactExtraction exact = egraph::ExtractExact(eg, prices, roots, all, folded, 1000, 10);
  CHECK(exact.status == egraph::ExactStatus::kOptimal);
  REQUIRE_FALSE(exact.extraction.choice.empty());
  CHECK(exact.extraction.order.size() == 3);  // x, W, out
  CHECK(eg.Find(eg.node(exact.extraction.choice[eg.Find(out)]).children[1]) == eg.Find(w));
}

TEST_CASE("E-graph: greedy by DAG costs counts a subexpression shared under one reader once", "[egraph]") {
  // out = Relu(S) + Transpose(S), or Mul(x, x); S = x . x is dear (10), Mul 15, the rest
  // 1. By tree costs the sum counts S twice (1 + 11 + 11 = 23) and loses to Mul; its DAG
  // cost is 13.
  SharedProduct h;
  EGraph& eg = h.eg;
  const ClassId x = h.x, s = h.s, a = h.a, b = h.b;
  const ClassId out = h.Op(op_names::kAdd, {a, b});
  REQUIRE(eg.Merge(out, h.Op(op_names::kMul, {x, x})));
  eg.Rebuild();
  std::vector<double> prices(eg.num_node_ids(), 0);
  prices[NodeOf(eg, s, op_names::kMatMul)] = 10;
  prices[NodeOf(eg, a, op_names::kRelu)] = prices[NodeOf(eg, b, op_names::kTranspose)] =
      prices[NodeOf(eg, out, op_names::kAdd)] = 1;
  prices[NodeOf(eg, out, op_names::kMul)] = 15;
  const std::vector<ClassId> roots = {out};
  auto tree = egraph::ExtractGreedy(eg, prices, roots);
  REQUIRE(tree.ok());
  CHECK(tree->choice[eg.Find(out)] == NodeOf(eg, out, op_names::kMul));
  const std::optional<egraph::Extraction> dag = egraph::ExtractGreedyDag(eg, prices, roots, 10);
  REQUIRE(dag.has_value());
  CHECK(dag->choice[eg.Find(out)] == NodeOf(eg, out, op_names::kAdd));
  CHECK(egraph::DagCost(eg, prices, roots, dag->choice) == Approx(13));
  CHECK(dag->order.size() == 5);  // x, S, both readers, out
}

// The adapter layer's e-graph saturated with all shipped rules, and its output's class.
struct SaturatedAdapter {
  egraph::GraphEGraph built;
  std::vector<ClassId> roots;

  SaturatedAdapter() {
    const Graph g = AdapterLayer();
    auto made = egraph::BuildEGraph(g);
    REQUIRE(made.ok());
    built = *std::move(made);
    egraph::Saturate(built.egraph, AllMatchers(), {});
    roots = {built.value_class[g.outputs()[0]]};
  }
};

// Counts the nodes it prices; prices as the analytic model, doubled.
class CountingCost : public AnalyticCost {
 public:
  std::string name() const override { return "counting"; }
  double NodeCost(const Graph& graph, NodeId n) override {
    ++calls;
    return 2 * AnalyticCost::NodeCost(graph, n);
  }
  int calls = 0;
};

TEST_CASE("E-graph: only near-optimal e-nodes are measured", "[egraph]") {
  SaturatedAdapter adapter;
  EGraph& eg = adapter.built.egraph;
  const std::vector<ClassId>& roots = adapter.roots;
  AnalyticCost analytic;
  CountingCost measured;
  egraph::PricingStats stats;
  const std::vector<double> prices = egraph::PriceWithPruning(eg, analytic, measured, roots, stats);
  CHECK(stats.measured == measured.calls);
  CHECK(stats.measured > 0);
  CHECK(stats.measured < stats.priced);
  CHECK(stats.scale == Approx(2));
  // Every price is the measured one or the analytic one scaled: here both are doubled.
  const std::vector<double> plain = egraph::PriceENodes(eg, analytic);
  for (ENodeId n = 0; n < eg.num_node_ids(); ++n)
    if (eg.alive(n)) CHECK(prices[n] == Approx(2 * plain[n]));
  // The engine reports the same counts.
  egraph::EGraphSearchResult found = egraph::OptimizeWithEGraph(AdapterLayer(), AllMatchers(), measured, analytic, {});
  CHECK(found.stats.measured_operators == stats.measured);
  CHECK(found.stats.priced_operators == stats.priced);
  CHECK_FALSE(found.stats.exact.empty());
}

// Prices an Add ten times, anything else twice, what the analytic model says.
class AddDearCost : public AnalyticCost {
 public:
  std::string name() const override { return "add-dear"; }
  double NodeCost(const Graph& graph, NodeId n) override {
    return (graph.node(n).op == testing::Op(op_names::kAdd) ? 10 : 2) * AnalyticCost::NodeCost(graph, n);
  }
};

TEST_CASE("E-graph: e-nodes left unmeasured are scaled by their own operator's ratio", "[egraph]") {
  SaturatedAdapter adapter;
  EGraph& eg = adapter.built.egraph;
  const std::vector<ClassId>& roots = adapter.roots;
  AnalyticCost analytic;
  AddDearCost measured;
  egraph::PricingStats stats;
  const std::vector<double> prices = egraph::PriceWithPruning(eg, analytic, measured, roots, stats);
  REQUIRE(stats.measured < stats.priced);
  const std::vector<double> plain = egraph::PriceENodes(eg, analytic);
  int adds = 0;
  for (ENodeId n = 0; n < eg.num_node_ids(); ++n) {
    if (!eg.alive(n) || plain[n] <= 0) continue;
    const bool add = eg.node(n).op == testing::Op(op_names::kAdd);
    if (!add && eg.node(n).op != testing::Op(op_names::kMatMul)) continue;  // operators the input has, so measured
    adds += add;
    CHECK(prices[n] == Approx((add ? 10 : 2) * plain[n]));
  }
  CHECK(adds > 1);
}

// Prices a node 1, 2 or 3 times what the analytic model says, by its output's size: a
// ratio per operator cannot tell these prices from the analytic ones.
class SizeDependentCost : public AnalyticCost {
 public:
  std::string name() const override { return "size-dependent"; }
  static double Factor(int64_t elements) { return 1 + elements % 3; }
  double NodeCost(const Graph& graph, NodeId n) override {
    ++calls;
    return Factor(NumElements(graph.value(graph.node(n).outputs[0]).shape)) * AnalyticCost::NodeCost(graph, n);
  }
  int calls = 0;
};

TEST_CASE("E-graph: e-nodes an extraction chose are measured when asked, once", "[egraph]") {
  SaturatedAdapter adapter;
  EGraph& eg = adapter.built.egraph;
  AnalyticCost analytic;
  SizeDependentCost measured;
  egraph::PrunedPricing pricing(eg, analytic, measured, adapter.roots);
  const std::vector<double> plain = egraph::PriceENodes(eg, analytic);
  auto true_price = [&](ENodeId n) {
    const ENodeId first = egraph::FirstOutput(eg, n);
    return SizeDependentCost::Factor(NumElements(eg.eclass(eg.ClassOf(first)).type.shape)) * plain[n];
  };
  std::vector<ENodeId> all;
  int mispriced = 0;
  for (ENodeId n = 0; n < eg.num_node_ids(); ++n) {
    if (!eg.alive(n) || plain[n] <= 0) continue;
    all.push_back(n);
    mispriced += pricing.prices()[n] != Approx(true_price(n));
  }
  REQUIRE(mispriced > 0);  // e-nodes priced by scaling
  const int64_t measured_before = pricing.stats().measured;
  const int calls_before = measured.calls;
  const int64_t added = pricing.MeasureToo(all);
  CHECK(added == pricing.stats().priced - measured_before);
  CHECK(pricing.stats().measured == pricing.stats().priced);
  CHECK(measured.calls > calls_before);
  for (ENodeId n : all) CHECK(pricing.prices()[n] == Approx(true_price(n)));
  CHECK(pricing.MeasureToo(all) == 0);  // nothing measured twice
}

// Records, for each node it prices, which operands are constants.
class ConstantRecordingCost : public AnalyticCost {
 public:
  std::string name() const override { return "recording"; }
  double NodeCost(const Graph& graph, NodeId n) override {
    const Node& node = graph.node(n);
    Priced priced{std::string(node.op->name()), {}, {}};
    for (const InputInfo& in : graph.InputInfos(node)) {
      priced.constant.push_back(in.constant != nullptr);
      priced.shapes.push_back(in.shape);
    }
    seen.push_back(std::move(priced));
    return AnalyticCost::NodeCost(graph, n);
  }
  struct Priced {
    std::string op;
    std::vector<bool> constant;
    std::vector<Shape> shapes;
  };
  std::vector<Priced> seen;
};

TEST_CASE("E-graph: an operand computed from weights alone is priced as the constant it becomes", "[egraph]") {
  SaturatedAdapter adapter;
  EGraph& eg = adapter.built.egraph;
  ConstantRecordingCost cost;
  egraph::PriceENodes(eg, cost);
  // Of the products of x [256,64] and a [64,64] matrix, x W reads the weight W; x (A B)
  // and x (W + A B) read weights folded once written, and are priced so.
  int fed = 0, constant = 0;
  for (const auto& priced : cost.seen) {
    CHECK(priced.constant != std::vector<bool>{true, true});  // computed ahead of time: not priced
    if (priced.op != op_names::kMatMul || priced.shapes != std::vector<Shape>{{256, 64}, {64, 64}}) continue;
    ++(priced.constant[1] ? constant : fed);
  }
  CHECK(fed == 0);
  CHECK(constant >= 2);
}

// x -> Relu -> Sigmoid, its e-graph, and the e-nodes of the two operators.
struct ReluThenSigmoid {
  ReluThenSigmoid() {
    const ValueId x = *g.AddInput("x", DataType::kFloat32, {1, 8, 4, 4});
    const ValueId a = AddOp(g, op_names::kRelu, {x}, "a");
    REQUIRE(g.AddOutput(AddOp(g, op_names::kSigmoid, {a}, "b")).ok());
    auto made = egraph::BuildEGraph(g);
    REQUIRE(made.ok());
    built = *std::move(made);
    const EGraph& eg = built.egraph;
    relu = eg.NodesIn(eg.Find(built.value_class[a])).front();
    sigmoid = eg.NodesIn(eg.Find(built.value_class[g.outputs()[0]])).front();
  }
  Graph g;
  egraph::GraphEGraph built;
  ENodeId relu = egraph::kNoENode, sigmoid = egraph::kNoENode;
};

// Analytic prices, and a record of the nodes each MeasureTogether was given; it says
// they are all known.
class TogetherRecordingCost : public AnalyticCost {
 public:
  std::vector<bool> MeasureTogether(absl::Span<const NodeOf> nodes, std::chrono::steady_clock::time_point) override {
    for (const NodeOf& n : nodes) ops.push_back(std::string(n.graph->node(n.node).op->name()));
    ++calls;
    return std::vector<bool>(nodes.size(), true);
  }
  std::vector<std::string> ops;
  int calls = 0;
};

TEST_CASE("E-graph: the operators priced by measurement are measured together first", "[egraph]") {
  const ReluThenSigmoid made;
  const EGraph& eg = made.built.egraph;
  const ENodeId relu = made.relu, sigmoid = made.sigmoid;
  std::vector<bool> only(eg.num_node_ids(), false);
  only[sigmoid] = true;
  TogetherRecordingCost cost;
  // Its deadline already past: what MeasureTogether made known is priced all the same.
  const std::vector<double> prices = egraph::PriceENodes(eg, cost, &only, nullptr, std::chrono::steady_clock::now());
  CHECK(cost.calls == 1);
  CHECK(cost.ops == std::vector<std::string>{op_names::kSigmoid});
  CHECK(prices[sigmoid] > 0);
  CHECK(prices[relu] == 0);  // not marked: not priced
}

// Charges a node 10 more where its first input is made by an operator of another type,
// as ONNX Runtime pays a layout conversion between operators running in different
// layouts (OrtCost charges the reader).
class NeighbourCost : public AnalyticCost {
 public:
  std::string name() const override { return "neighbours"; }
  double NodeCost(const Graph& graph, NodeId n) override {
    const Node& node = graph.node(n);
    const NodeId producer = graph.value(node.inputs[0]).producer;
    return producer != kNoNode && graph.node(producer).op != node.op ? 11 : 1;
  }
};

TEST_CASE("E-graph: with the input graph as context, e-nodes pay for the layouts around them", "[egraph]") {
  const ReluThenSigmoid made;
  const Graph& g = made.g;
  const EGraph& eg = made.built.egraph;
  const ENodeId relu = made.relu, sigmoid = made.sigmoid;
  NeighbourCost cost;
  const std::vector<double> alone = egraph::PriceENodes(eg, cost);
  CHECK(alone[relu] == 1);
  CHECK(alone[sigmoid] == 1);
  const UseIndex uses(g);
  const egraph::PricingContext context{&g, &uses};
  const std::vector<double> placed = egraph::PriceENodes(eg, cost, nullptr, &context);
  CHECK(placed[relu] == 11);     // its reader, the Sigmoid, pays 10 more for reading it
  CHECK(placed[sigmoid] == 11);  // it reads the Relu's output
}

TEST_CASE("E-graph: each output of an operator pays for its own readers' layouts", "[egraph]") {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {1, 8, 4, 4});
  auto parts = g.AddNode(testing::Op(op_names::kSplit),
                         Params().Set("axis", int64_t{1}).Set("sizes", std::vector<int64_t>{3, 5}), {x});
  REQUIRE(parts.ok());
  REQUIRE(g.AddOutput(AddOp(g, op_names::kSigmoid, {(*parts)[0]}, "a")).ok());
  auto halves = g.AddNode(testing::Op(op_names::kSplit),
                          Params().Set("axis", int64_t{1}).Set("sizes", std::vector<int64_t>{2, 3}), {(*parts)[1]});
  REQUIRE(halves.ok());
  for (ValueId v : *halves) REQUIRE(g.AddOutput(v).ok());
  auto built = egraph::BuildEGraph(g);
  REQUIRE(built.ok());
  const EGraph& eg = built->egraph;
  const ENodeId first = eg.NodesIn(eg.Find(built->value_class[(*parts)[0]])).front();
  const ENodeId second = eg.NodesIn(eg.Find(built->value_class[(*parts)[1]])).front();
  const UseIndex uses(g);
  const egraph::PricingContext context{&g, &uses};
  NeighbourCost cost;
  const std::vector<double> placed = egraph::PriceENodes(eg, cost, nullptr, &context);
  // The Split costs 1, half to each output; the Sigmoid reading the first pays 10 more
  // for it, the Split reading the second (the same operator) nothing.
  CHECK(placed[first] == 10.5);
  CHECK(placed[second] == 0.5);
}

// Prices a convolution ten times what the analytic model says but for a grouped one of
// at least 16 channels per group (as if a runtime's blocked kernels ran those alone
// well), and any convolution whose kernel is fed rather than constant ten times more (it
// is packed on every run).
class NarrowGroupsDearCost : public AnalyticCost {
 public:
  std::string name() const override { return "narrow-groups-dear"; }
  double NodeCost(const Graph& graph, NodeId n) override {
    const Node& node = graph.node(n);
    double factor = 1;
    if (node.op == testing::Op(op_names::kConv2D)) {
      const Value& kernel = graph.value(node.inputs[1]);
      if (kernel.shape[1] < 16 || graph.value(node.inputs[0]).shape[1] == kernel.shape[1]) factor *= 10;
      if (!kernel.is_constant()) factor *= 10;
    }
    return factor * AnalyticCost::NodeCost(graph, n);
  }
};

TEST_CASE("E-graph: a grouped convolution is regrouped where the measured prices say it pays", "[egraph]") {
  // x [1,64,8,8] -> two dense 3x3 convolutions -> grouped 3x3 convolution, 8 groups of 8
  // channels: the grouped one reads an activation that costs far more than it (the
  // regrouping's MergeGroups reads the activation's shape, not its cost).
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {1, 64, 8, 8});
  auto conv = [](const char* grouping) {
    return Params()
        .Set("grouping", grouping)
        .Set("strides", std::vector<int64_t>{1, 1})
        .Set("padding", "same")
        .Set("activation", "none");
  };
  const ValueId first = AddOp(g, op_names::kConv2D, {x, AddWeight(g, "w0", {64, 64, 3, 3}, 1)}, "first", conv("dense"));
  const ValueId dense =
      AddOp(g, op_names::kConv2D, {first, AddWeight(g, "w1", {64, 64, 3, 3}, 3)}, "dense", conv("dense"));
  REQUIRE(g.AddOutput(AddOp(g, op_names::kConv2D, {dense, AddWeight(g, "w2", {64, 8, 3, 3}, 2)}, "y", conv("grouped")))
              .ok());
  NarrowGroupsDearCost measured;
  egraph::EGraphSearchResult found = egraph::OptimizeWithEGraph(g, AllMatchers(), measured, measured, {});
  INFO(found.stats.kept_input_because);
  REQUIRE(found.stats.extractor != "none");
  auto folded = FoldWeights(found.best);
  REQUIRE(folded.ok());
  // The grouped kernel now has 16 channels per group.
  bool regrouped = false;
  for (NodeId n = 0; n < folded->num_nodes(); ++n)
    if (folded->node(n).op == testing::Op(op_names::kConv2D))
      regrouped |= folded->value(folded->node(n).inputs[1]).shape == Shape{64, 16, 3, 3};
  CHECK(regrouped);
  ExpectSameOutputs(g, *folded);
}

// x [16, 64] through three linear layers, each with a low-rank adapter (x.W + (x.A).B,
// r = 4), then a Relu: the adapters fold into the weights, then the three products merge
// into one.
Graph ThreeAdaptedLayers() {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {16, 64});
  for (int k = 0; k < 3; ++k) {
    const ValueId w = AddWeight(g, absl::StrCat("W", k), {64, 64}, 10 * k + 1);
    const ValueId a = AddWeight(g, absl::StrCat("A", k), {64, 4}, 10 * k + 2);
    const ValueId b = AddWeight(g, absl::StrCat("B", k), {4, 64}, 10 * k + 3);
    const ValueId base = AddOp(g, op_names::kMatMul, {x, w}, absl::StrCat("base", k));
    const ValueId low = AddOp(g, op_names::kMatMul, {AddOp(g, op_names::kMatMul, {x, a}, absl::StrCat("xa", k)), b},
                              absl::StrCat("xab", k));
    const ValueId sum = AddOp(g, op_names::kAdd, {base, low}, absl::StrCat("sum", k));
    REQUIRE(g.AddOutput(AddOp(g, op_names::kRelu, {sum}, absl::StrCat("y", k))).ok());
  }
  return g;
}

TEST_CASE("E-graph: a second round from the first round's graph merges what a full e-graph could not", "[egraph]") {
  const Graph g = ThreeAdaptedLayers();
  AnalyticCost cost;
  egraph::EGraphOptions options;
  options.limits.max_enodes = 2000;  // the e-graph fills up once the adapters are folded
  options.max_rounds = 1;
  const egraph::EGraphSearchResult one = egraph::OptimizeWithEGraph(g, MatchersWithMerges(), cost, cost, options);
  REQUIRE(one.stats.saturation.stop == egraph::SaturationStop::kNodes);
  CHECK(one.stats.later_rounds.empty());
  auto folded_one = FoldWeights(one.best);
  REQUIRE(folded_one.ok());
  CHECK(CountOps(*folded_one, op_names::kMatMul) == 3);  // each adapter folded, no merge

  options.max_rounds = 2;
  const egraph::EGraphSearchResult two = egraph::OptimizeWithEGraph(g, MatchersWithMerges(), cost, cost, options);
  REQUIRE(two.stats.later_rounds.size() == 1);
  CHECK(two.stats.later_rounds[0].extractor != "none");
  auto folded_two = FoldWeights(two.best);
  REQUIRE(folded_two.ok());
  CHECK(CountOps(*folded_two, op_names::kMatMul) == 1);  // and the three products merged
  CHECK(two.best_cost < one.best_cost);
  CHECK(two.initial_cost == one.initial_cost);
  // The rules counted over both rounds: the first round's folds and the second's merges.
  int applications_one = 0, applications_two = 0;
  for (const auto& [rule, n] : one.rules_applied) applications_one += n;
  for (const auto& [rule, n] : two.rules_applied) applications_two += n;
  CHECK(applications_two >= applications_one + 2);
  ExpectSameOutputs(g, *folded_two);
}

}  // namespace
}  // namespace taso
