// Grouped convolutions in rules: the "grouped" grouping (group count from the shapes),
// MergeGroups' block-diagonal kernels, and the shipped regrouping rule applied to a
// convolution of 4 channels per group.
#include <catch2/catch.hpp>

#include "rule_lookup.h"
#include "taso/ir/executor.h"
#include "taso/ir/ops/names.h"
#include "taso/passes/fold.h"
#include "taso/rewrite/cost.h"
#include "taso/rewrite/match.h"
#include "taso/rules/rules.h"
#include "test_util.h"

using namespace taso;
using testing::AddOp;
using testing::AddWeight;

namespace {

Params GroupedConv() {
  return Params()
      .Set("grouping", "grouped")
      .Set("strides", std::vector<int64_t>{1, 1})
      .Set("padding", "same")
      .Set("activation", "relu");
}

// x [1,32,6,6] -> Conv (8 groups of 4 channels, 3x3, relu) -> y.
Graph GroupedConvGraph() {
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {1, 32, 6, 6});
  REQUIRE(x.ok());
  const ValueId w = AddWeight(g, "w", {32, 4, 3, 3}, 5);
  REQUIRE(g.AddOutput(AddOp(g, op_names::kConv2D, {*x, w}, "y", GroupedConv())).ok());
  return g;
}

void ExpectSameOutputs(const Graph& a, const Graph& b) { CHECK(testing::OutputDifference(a, b) < 1e-4); }

std::string TypeError(const std::string& op, const Params& p, std::vector<Shape> shapes) {
  std::vector<InputInfo> in;
  for (auto& s : shapes) in.push_back(InputInfo{true, DataType::kFloat32, s});
  auto r = testing::Op(op)->InferTypes(p, in);
  return r.ok() ? "" : std::string(r.status().message());
}

}  // namespace

TEST_CASE("A grouped convolution on merged groups' kernels computes the same") {
  Graph g = GroupedConvGraph();
  // The same convolution with 2 groups of 16 channels on MergeGroups' kernel.
  Graph merged;
  auto x = merged.AddInput("x", DataType::kFloat32, {1, 32, 6, 6});
  REQUIRE(x.ok());
  const ValueId w = AddWeight(merged, "w", {32, 4, 3, 3}, 5);
  const ValueId m = AddOp(merged, op_names::kMergeGroups, {w, *x}, "m", Params().Set("factor", int64_t{4}));
  CHECK(merged.value(m).shape == Shape{32, 16, 3, 3});
  REQUIRE(merged.AddOutput(AddOp(merged, op_names::kConv2D, {*x, m}, "y", GroupedConv())).ok());
  ExpectSameOutputs(g, merged);
  // MergeGroups reads the input's shape only: it is folded into a constant kernel.
  CHECK(FindWeightOnly(merged).nodes == std::vector<bool>{true, false});
  auto folded = FoldWeights(merged);
  REQUIRE(folded.ok());
  CHECK(folded->num_nodes() == 1);
  ExpectSameOutputs(g, *folded);
}

TEST_CASE("MergeGroups refuses kernels whose groups it cannot merge") {
  const Params by4 = Params().Set("factor", int64_t{4});
  CHECK_THAT(TypeError(op_names::kMergeGroups, by4, {{32, 4, 3, 3}, {1, 30, 6, 6}}),
             Catch::Contains("does not group input"));
  CHECK_THAT(TypeError(op_names::kMergeGroups, by4, {{32, 4, 3, 3}, {1, 24, 6, 6}}),
             Catch::Contains("cannot merge 6 groups"));
  CHECK_THAT(TypeError(op_names::kMergeGroups, Params(), {{32, 4, 3, 3}, {1, 32, 6, 6}}),
             Catch::Contains("factor must be at least 2"));
  CHECK_THAT(TypeError(op_names::kMergeGroups, by4, {{32, 4, 3}, {1, 32, 6, 6}}), Catch::Contains("rank 4"));
  CHECK_THAT(TypeError(op_names::kConv2D, GroupedConv(), {{1, 30, 6, 6}, {32, 4, 3, 3}}),
             Catch::Contains("does not make a grouped"));
  CHECK_THAT(TypeError(op_names::kConv2D, GroupedConv(), {{1, 32, 6, 6}, {32, 32, 3, 3}}),
             Catch::Contains("neither dense"));
  CHECK_THAT(TypeError(op_names::kConv2D, GroupedConv(), {{1, 32, 6, 6}, {32, 1, 3, 3}}),
             Catch::Contains("neither dense"));
}

namespace {

// The shipped rule regrouping a grouped convolution: groups merged two at a time.
const Rule& RegroupRule() {
  return testing::ShippedRuleLike("Conv2D{grouping=\"grouped\"}(X, W)",
                                  "Conv2D{grouping=\"grouped\"}(X, MergeGroups{factor=2}(W, X))");
}

// Applies the instance of `rule` that matches the graph's convolution; fails the test
// where none does.
Graph ApplyToConv(const Graph& g, const Rule& rule) {
  std::optional<Graph> applied = testing::ApplyFirstMatch(g, rule);
  if (!applied) FAIL("no instance of " << rule.name << " matches");
  return *std::move(applied);
}

// The kernel the convolution of a graph reads, once weights are folded.
Shape FoldedKernelShape(const Graph& g) {
  auto folded = FoldWeights(g);
  REQUIRE(folded.ok());
  REQUIRE(folded->num_nodes() == 1);
  return folded->value(folded->node(0).inputs[1]).shape;
}

}  // namespace

TEST_CASE("The shipped regrouping rule takes 4 channels per group to 16, computing the same") {
  // An imported convolution: 16 groups of 4 channels, explicit pads, relu.
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {1, 64, 6, 6});
  REQUIRE(x.ok());
  const Params imported = Params()
                              .Set("strides", std::vector<int64_t>{1, 1})
                              .Set("pads", std::vector<int64_t>{1, 1, 1, 1})
                              .Set("dilations", std::vector<int64_t>{1, 1})
                              .Set("group", int64_t{16})
                              .Set("activation", "relu");
  REQUIRE(g.AddOutput(AddOp(g, op_names::kConv2D, {*x, AddWeight(g, "w", {64, 4, 3, 3}, 3)}, "y", imported)).ok());
  const Rule& rule = RegroupRule();
  const Graph twice = ApplyToConv(ApplyToConv(g, rule), rule);
  CHECK(FoldedKernelShape(twice) == Shape{64, 16, 3, 3});
  ExpectSameOutputs(g, twice);
  ExpectSameOutputs(g, *FoldWeights(twice));
}
