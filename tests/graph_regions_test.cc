// FindDifferingRegions: where two graphs of one computation differ, with the nodes next
// to it, as two graphs that compute what the differing parts compute.
#include <catch2/catch.hpp>

#include "taso/ir/executor.h"
#include "taso/ir/graph_regions.h"
#include "taso/ir/ops/names.h"
#include "test_util.h"

namespace taso {
namespace {

using testing::AddOp;
using testing::AddWeight;
using testing::CountOps;

// x [1, 8] through two products (`merged`: one product of the weights side by side, then
// split, its pieces named as the two products were), each Relu, added, Tanh.
Graph Heads(bool merged, const std::string& prefix = "") {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {1, 8});
  const ValueId a = AddWeight(g, prefix + "a", {8, 4}, 1), b = AddWeight(g, prefix + "b", {8, 4}, 2);
  ValueId pa, pb;
  if (merged) {
    const ValueId ab = AddOp(g, op_names::kConcat, {a, b}, "ab", Params().Set("axis", int64_t{1}));
    const ValueId m = AddOp(g, op_names::kMatMul, {x, ab}, "m");
    auto pieces = g.AddNode(testing::Op(op_names::kSplit),
                            Params().Set("axis", int64_t{1}).Set("sizes", std::vector<int64_t>{4, 4}), {m}, "split",
                            {"pa", "pb"});
    REQUIRE(pieces.ok());
    pa = (*pieces)[0];
    pb = (*pieces)[1];
  } else {
    pa = AddOp(g, op_names::kMatMul, {x, a}, prefix + "pa");
    pb = AddOp(g, op_names::kMatMul, {x, b}, prefix + "pb");
  }
  const ValueId s = AddOp(
      g, op_names::kAdd,
      {AddOp(g, op_names::kRelu, {pa}, prefix + "ra"), AddOp(g, op_names::kRelu, {pb}, prefix + "rb")}, prefix + "s");
  REQUIRE(g.AddOutput(AddOp(g, op_names::kTanh, {s}, prefix + "t")).ok());
  return g;
}

TEST_CASE("Two graphs computing alike have no differing region, whatever their names") {
  auto regions = FindDifferingRegions(Heads(false), Heads(false, "other_"));
  REQUIRE(regions.ok());
  CHECK_FALSE(regions->has_value());
}

TEST_CASE("A merge of two products and the products it replaces are each a region, with the same neighbours") {
  const Graph before = Heads(false), after = Heads(true);
  auto found = FindDifferingRegions(before, after);
  REQUIRE(found.ok());
  REQUIRE(found->has_value());
  const DifferingRegions& regions = **found;
  CHECK(regions.differing_before == 2);  // the two products
  CHECK(regions.differing_after == 3);   // the weights' concatenation, the product, the split
  // With the Relus reading them, and not the Add and Tanh further on.
  CHECK(CountOps(regions.before, op_names::kRelu) == 2);
  CHECK(CountOps(regions.after, op_names::kRelu) == 2);
  CHECK(CountOps(regions.before, op_names::kAdd) + CountOps(regions.after, op_names::kAdd) == 0);
  CHECK(regions.nodes_before.size() == 4);
  CHECK(regions.nodes_after.size() == 5);
  // Both read x and give what the Add reads, computed alike.
  REQUIRE(regions.before.inputs().size() == 1);
  REQUIRE(regions.after.inputs().size() == 1);
  REQUIRE(regions.before.outputs().size() == 2);
  REQUIRE(regions.after.outputs().size() == 2);
  const TensorMap inputs = RandomInputs(regions.before, 5);
  auto a = RunReference(regions.before, inputs);
  auto b = RunReference(regions.after, inputs);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(MaxAbsDifference(*a, *b) < 1e-5);
}

TEST_CASE("Each hop takes in the nodes next to the region so far") {
  const Graph before = Heads(false), after = Heads(true);
  for (const auto& [hops, nodes_before] : std::vector<std::pair<int, size_t>>{{1, 4}, {2, 5}, {3, 6}}) {
    auto found = FindDifferingRegions(before, after, hops);
    REQUIRE(found.ok());
    REQUIRE(found->has_value());
    const DifferingRegions& regions = **found;
    INFO(hops << " hops");
    // The products with their Relus, then the Add, then the Tanh.
    CHECK(regions.nodes_before.size() == nodes_before);
    CHECK(regions.nodes_after.size() == nodes_before + 1);  // three nodes in place of the two products
    CHECK(CountOps(regions.before, op_names::kAdd) == (hops >= 2 ? 1 : 0));
    CHECK(CountOps(regions.after, op_names::kTanh) == (hops >= 3 ? 1 : 0));
  }
}

TEST_CASE("Without names in common, what a merge changes reaches the outputs") {
  // Every value the merge's readers compute is computed from another value than before,
  // and no name says it is the same one.
  const Graph before = Heads(false, "x_"), after = Heads(true);
  auto found = FindDifferingRegions(before, after);
  REQUIRE(found.ok());
  REQUIRE(found->has_value());
  CHECK((*found)->differing_before == before.num_nodes());
  CHECK((*found)->differing_after == after.num_nodes());
  CHECK((*found)->before.outputs().size() == 1);  // the graph's output
}

}  // namespace
}  // namespace taso
