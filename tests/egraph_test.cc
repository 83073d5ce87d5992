// The e-graph engine: the e-graph's invariants, the limits, determinism, and rewrites the
// backtracking search cannot reach.
#include <catch2/catch.hpp>

#include "rule_lookup.h"
#include "taso/egraph/ematch.h"
#include "taso/egraph/engine.h"
#include "taso/egraph/extract.h"
#include "taso/fold.h"
#include "taso/search.h"
#include "test_util.h"

namespace taso {
namespace {

using egraph::ClassId;
using egraph::EGraph;
using egraph::ENodeId;
using testing::AddOp;
using testing::AddWeight;
using testing::ShippedRules;

const std::vector<RuleMatcher>& AllMatchers() {
  static const std::vector<RuleMatcher> matchers = PrepareRules(ShippedRules().rules);
  return matchers;
}

// The matchers of one shipped rule found by content, both directions.
std::vector<RuleMatcher> MatchersOf(const Rule& rule) { return PrepareRules({rule}); }

int CountOps(const Graph& g, const std::string& op) {
  int n = 0;
  for (NodeId i = 0; i < g.num_nodes(); ++i) n += g.node(i).op == testing::Op(op);
  return n;
}

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
  const ValueId base = AddOp(g, "MatMul", {x, w}, "base");
  const ValueId low = AddOp(g, "MatMul", {AddOp(g, "MatMul", {x, a}, "xa"), b}, "xab");
  REQUIRE(g.AddOutput(AddOp(g, "Add", {base, low}, "y")).ok());
  return g;
}

egraph::EGraphSearchResult RunEngine(const Graph& g, const std::vector<RuleMatcher>& rules,
                                     egraph::SaturationLimits limits = {}) {
  AnalyticCost cost;
  return egraph::OptimizeWithEGraph(g, rules, cost, cost, limits);
}

TEST_CASE("The e-graph engine merges a low-rank adapter that backtracking keeps", "[egraph]") {
  const Graph g = AdapterLayer();
  egraph::EGraphSearchResult found = RunEngine(g, AllMatchers());
  INFO(found.stats.kept_input_because);
  REQUIRE(found.stats.extractor == "greedy+local");
  auto folded = FoldWeights(found.search.best);
  REQUIRE(folded.ok());
  CHECK(CountOps(*folded, "MatMul") == 1);
  CHECK(folded->num_nodes() == 1);
  CHECK(found.search.best_cost < found.search.initial_cost);
  ExpectSameOutputs(g, *folded);

  AnalyticCost cost;
  SearchOptions options;  // alpha 1.05
  const SearchResult backtracking = Optimize(g, AllMatchers(), cost, options);
  CHECK(CountOps(backtracking.best, "MatMul") == 3);
}

}  // namespace
}  // namespace taso
