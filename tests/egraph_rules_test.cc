// Which rules and matches the e-graph applies: rules that spell out an identity are left
// out, merges are applied only to independent operators, once each way round, and weights
// are not rewritten.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "rule_lookup.h"
#include "taso/egraph/engine.h"
#include "taso/egraph/join_pieces.h"
#include "taso/egraph/rule_selection.h"
#include "taso/ir/ops/names.h"
#include "taso/rewrite/search.h"
#include "test_util.h"

namespace taso {
namespace {

using egraph::ClassId;
using egraph::EGraph;
using egraph::ENodeId;
using testing::AddOp;
using testing::AddWeight;

// The K=4 merge of two linear layers reading different inputs through one weight and bias:
// their inputs concatenated along the rows, one product, a Split of its rows.
const Rule& RowMerge() {
  return testing::ShippedRuleLike("Gemm{transB=1}(A, B, c), Gemm{transB=1}(C, B, c)",
                                  "Split{axis=0}(Gemm{transB=1}(Concat{axis=0}(A, C), B, c))[0], "
                                  "Split{axis=0}(Gemm{transB=1}(Concat{axis=0}(A, C), B, c))[1]",
                                  -1, &testing::ShippedMergeRules());
}

std::vector<bool> Flagged(const std::vector<Rule>& rules) { return egraph::RedundantInEGraph(PrepareRules(rules)); }

TEST_CASE("E-graph: rules that spell out an identity, or entangle a merge, are left out", "[egraph]") {
  // A Split of a Concat gives the Concat's inputs back: the rule only restates that.
  const Rule& mirror = testing::ShippedRuleLike("Split{axis=0}(Concat{axis=0}(A, B))[0], Split(Concat(A, B))[1]",
                                                "Split{axis=0}(Concat{axis=0}(B, A))[1], Split(Concat(B, A))[0]", 2);
  for (bool flagged : Flagged({mirror})) CHECK(flagged);  // both directions
  const Rule& assoc = testing::ShippedRuleLike("MatMul(C, MatMul(A, B))", "MatMul(MatMul(C, A), B)", 2);
  for (bool flagged : Flagged({assoc, RowMerge()})) CHECK_FALSE(flagged);
  // Two merged products and, beside them, a concatenation of their inputs: several roots
  // and an operator that is none.
  const std::vector<const Rule*> entangled = testing::ShippedRulesLike(
      "Gemm{transB=1}(A, B, c), Gemm{transB=1}(C, B, c), Concat{axis=0}(C, Concat{axis=0}(A, A))",
      "Split(Gemm(Concat(C, A), B, c))[1], Split(Gemm(Concat(C, A), B, c))[0], Concat(Concat(C, A), A)", -1,
      &testing::ShippedMergeRules());
  REQUIRE(entangled.size() == 1);
  CHECK(Flagged({*entangled[0]})[0]);
}

// The classes of `g`'s values after saturating its e-graph with `rules` in both directions.
struct Saturated {
  egraph::GraphEGraph built;
  ClassId Of(const Graph& g, const std::string& value) const {
    return built.egraph.Find(built.value_class[g.FindValue(value)]);
  }
};

Saturated SaturateWith(const Graph& g, const std::vector<Rule>& rules, int multi_pattern_iterations = 1) {
  auto built = egraph::BuildEGraph(g);
  REQUIRE(built.ok());
  egraph::SaturationLimits limits;
  limits.time_limit = 3600;
  egraph::RuleScheduler scheduler;
  scheduler.multi_pattern_iterations = multi_pattern_iterations;
  const std::vector<RuleMatcher> matchers = PrepareRules(rules);
  egraph::Saturate(built->egraph, matchers, limits, scheduler);
  return Saturated{*std::move(built)};
}

// The e-nodes of `op` reading exactly `children`.
int CountReading(const EGraph& eg, const std::string& op, const std::vector<ClassId>& children) {
  int count = 0;
  for (ENodeId n = 0; n < eg.num_node_ids(); ++n) {
    if (!eg.alive(n) || eg.node(n).op != testing::Op(op)) continue;
    std::vector<ClassId> read;
    for (ClassId c : eg.node(n).children) read.push_back(eg.Find(c));
    count += read == children;
  }
  return count;
}

TEST_CASE("E-graph: merges join independent products once, never a step and the next", "[egraph]") {
  // Two steps of a recurrence through one linear layer (z reads y0), and a third product
  // y1 of another input through the same layer.
  Graph g;
  const ValueId x0 = *g.AddInput("x0", DataType::kFloat32, {1, 8});
  const ValueId x1 = *g.AddInput("x1", DataType::kFloat32, {1, 8});
  const ValueId w = AddWeight(g, "W", {8, 8}, 1), bias = AddWeight(g, "b", {8}, 2);
  const Params transposed = Params().Set("transB", int64_t{1});
  const ValueId y0 = AddOp(g, op_names::kGemm, {x0, w, bias}, "y0", transposed);
  REQUIRE(g.AddOutput(AddOp(g, op_names::kGemm, {x1, w, bias}, "y1", transposed)).ok());
  REQUIRE(g.AddOutput(AddOp(g, op_names::kGemm, {y0, w, bias}, "z", transposed)).ok());
  const Saturated s = SaturateWith(g, {RowMerge()}, 2);
  const EGraph& eg = s.built.egraph;
  const ClassId in0 = s.Of(g, "x0"), in1 = s.Of(g, "x1"), step = s.Of(g, "y0");
  // x0 and x1 merged one way round only.
  CHECK(CountReading(eg, op_names::kConcat, {in0, in1}) + CountReading(eg, op_names::kConcat, {in1, in0}) == 1);
  // y0 and z: z's input is y0, so their merge would read its own output.
  CHECK(CountReading(eg, op_names::kConcat, {in0, step}) + CountReading(eg, op_names::kConcat, {step, in0}) == 0);
  // y1 and z read independent inputs: merged.
  CHECK(CountReading(eg, op_names::kConcat, {in1, step}) + CountReading(eg, op_names::kConcat, {step, in1}) == 1);
  // No merge of a merge with one of its own parts (x0's rows twice).
  for (ENodeId n = 0; n < eg.num_node_ids(); ++n) {
    if (!eg.alive(n) || eg.node(n).op != testing::Op(op_names::kConcat)) continue;
    const ClassId a = eg.Find(eg.node(n).children[0]), b = eg.Find(eg.node(n).children[1]);
    CHECK(a != b);
    for (ClassId part : {in0, in1, step}) CHECK((CountReading(eg, op_names::kConcat, {a, part}) == 0 || a != part));
  }
}

// Five steps of a sequence through one linear layer: inputs x0..x4 [1, 64], outputs y0..y4.
Graph FiveSteps() {
  Graph g;
  const ValueId w = AddWeight(g, "W", {64, 64}, 1), bias = AddWeight(g, "b", {64}, 2);
  for (int t = 0; t < 5; ++t) {
    const ValueId x = *g.AddInput("x" + std::to_string(t), DataType::kFloat32, {1, 64});
    REQUIRE(g.AddOutput(
                 AddOp(g, op_names::kGemm, {x, w, bias}, "y" + std::to_string(t), Params().Set("transB", int64_t{1})))
                .ok());
  }
  return g;
}

// Per number of rows, the live e-nodes of `op` with that many output rows (of their first
// input's rows with `by_input`).
std::map<int64_t, int> RowsOf(const EGraph& eg, const std::string& op, bool by_input = false) {
  std::map<int64_t, int> rows;
  for (ENodeId n = 0; n < eg.num_node_ids(); ++n) {
    const egraph::ENode& node = eg.node(n);
    if (!eg.alive(n) || node.op != testing::Op(op) || node.output != 0) continue;
    ++rows[eg.eclass(by_input ? node.children[0] : eg.ClassOf(n)).type.shape[0]];
  }
  return rows;
}

TEST_CASE("E-graph: merges of merges join each set of steps once, whatever the order", "[egraph]") {
  const Graph g = FiveSteps();
  const Saturated s = SaturateWith(g, {RowMerge()}, 3);
  // Every pair, triple and quadruple of the five steps (10, 10, 5) and all five, each
  // joined by one product: the other orders and nestings of the same steps are not made.
  CHECK(RowsOf(s.built.egraph, op_names::kGemm) == std::map<int64_t, int>{{1, 5}, {2, 10}, {3, 10}, {4, 5}, {5, 1}});
}

TEST_CASE("E-graph: nested splits and concatenations are joined into one", "[egraph]") {
  const Graph g = FiveSteps();
  Saturated s = SaturateWith(g, {RowMerge()}, 3);
  EGraph& eg = s.built.egraph;
  CHECK(RowsOf(eg, op_names::kSplit, true)[5] == 1);  // the merge of all five cuts 4 + 1 or 3 + 2 rows
  REQUIRE(egraph::AddJoinedPieces(eg, 100000, 100000) > 0);
  // One Split cuts the five steps' rows at once, each piece the class of its step.
  std::vector<ClassId> steps, inputs;
  for (int t = 0; t < 5; ++t) {
    steps.push_back(s.Of(g, "y" + std::to_string(t)));
    inputs.push_back(s.Of(g, "x" + std::to_string(t)));
  }
  int five_way_splits = 0;
  for (ENodeId n = 0; n < eg.num_node_ids(); ++n) {
    const egraph::ENode& node = eg.node(n);
    if (!eg.alive(n) || node.op != testing::Op(op_names::kSplit) || node.num_outputs != 5) continue;
    std::vector<ClassId> pieces;
    egraph::ENode probe = node;
    for (probe.output = 0; probe.output < 5; ++probe.output) pieces.push_back(eg.ClassOf(eg.Lookup(probe)));
    std::vector<ClassId> sorted_pieces = pieces, sorted_steps = steps;
    std::sort(sorted_pieces.begin(), sorted_pieces.end());
    std::sort(sorted_steps.begin(), sorted_steps.end());
    CHECK(sorted_pieces == sorted_steps);
    five_way_splits += node.output == 0;
  }
  CHECK(five_way_splits >= 1);
  // And one Concat of the five inputs reads each directly.
  int flat_concats = 0;
  for (ENodeId n = 0; n < eg.num_node_ids(); ++n)
    if (eg.alive(n) && eg.node(n).op == testing::Op(op_names::kConcat) && eg.node(n).children.size() == 5) {
      std::vector<ClassId> read;
      for (ClassId c : eg.node(n).children) read.push_back(eg.Find(c));
      std::sort(read.begin(), read.end());
      std::vector<ClassId> sorted_inputs = inputs;
      std::sort(sorted_inputs.begin(), sorted_inputs.end());
      flat_concats += read == sorted_inputs;
    }
  CHECK(flat_concats >= 1);
}

TEST_CASE("E-graph: the engine joins all five steps into one product", "[egraph]") {
  const Graph g = FiveSteps();
  AnalyticCost cost;
  egraph::EGraphOptions options;
  options.limits.time_limit = 3600;
  const egraph::EGraphSearchResult found =
      egraph::OptimizeWithEGraph(g, PrepareRules({RowMerge()}), cost, cost, options);
  INFO(found.stats.kept_input_because);
  int products = 0;
  for (NodeId n = 0; n < found.best.num_nodes(); ++n) products += found.best.node(n).op == testing::Op(op_names::kGemm);
  CHECK(products == 1);
}

TEST_CASE("E-graph: weights are not rewritten, tensors fed at run time are", "[egraph]") {
  // (Concat(a, c))^T rewritten as Concat(a^T, c^T): for weights a and c, another form of
  // a tensor folded ahead of time either way.
  const Rule& transpose_concat = testing::ShippedRuleLike("Transpose{perm=[1,0]}(Concat{axis=0}(A, C))",
                                                          "Concat{axis=1}(Transpose(A), Transpose(C))", 2);
  for (bool weights : {true, false}) {
    Graph g;
    const ValueId x = *g.AddInput("x", DataType::kFloat32, {8, 4});
    const ValueId a = weights ? AddWeight(g, "a", {4, 4}, 1) : *g.AddInput("a", DataType::kFloat32, {4, 4});
    const ValueId c = weights ? AddWeight(g, "c", {4, 4}, 2) : *g.AddInput("c", DataType::kFloat32, {4, 4});
    const ValueId t =
        AddOp(g, op_names::kTranspose, {AddOp(g, op_names::kConcat, {a, c}, "ac", Params().Set("axis", int64_t{0}))},
              "t", Params().Set("perm", std::vector<int64_t>{1, 0}));
    REQUIRE(g.AddOutput(AddOp(g, op_names::kMatMul, {t, x}, "y")).ok());
    const Saturated s = SaturateWith(g, {transpose_concat});
    INFO("weights: " << weights);
    CHECK(s.built.egraph.NodesIn(s.Of(g, "t")).size() == (weights ? 1 : 2));
  }
}

}  // namespace
}  // namespace taso
