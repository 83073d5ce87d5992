// The graph-editing toolkit: the use index, fresh names and what is computable ahead of
// time (weight-only).
#include <catch2/catch.hpp>

#include "taso/ir/graph_copy.h"
#include "taso/ir/ops/names.h"
#include "taso/rewrite/cost.h"
#include "test_util.h"

using namespace taso;
using namespace taso::testing;

TEST_CASE("The use index lists each reader once and knows graph outputs and sole readers") {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {4, 4});
  const ValueId w = AddWeight(g, "w", {4, 4}, 1);
  const ValueId square = AddOp(g, op_names::kMul, {x, x}, "square");  // node 0 reads x twice
  const ValueId r = AddOp(g, op_names::kRelu, {square}, "r");         // node 1
  const ValueId t = AddOp(g, op_names::kTanh, {square}, "t");         // node 2
  const ValueId y = AddOp(g, op_names::kAdd, {r, w}, "y");            // node 3
  const ValueId s = AddOp(g, op_names::kSigmoid, {t}, "s");           // node 4
  REQUIRE(g.AddOutput(y).ok());
  REQUIRE(g.AddOutput(t).ok());
  REQUIRE(g.AddOutput(s).ok());

  const UseIndex uses(g);
  CHECK(uses.readers(x) == std::vector<NodeId>{0});
  CHECK(uses.SoleReader(x) == kNoNode);  // one reader, but it reads x in two inputs
  CHECK(uses.readers(square) == std::vector<NodeId>{1, 2});
  CHECK(uses.SoleReader(square) == kNoNode);
  CHECK(uses.SoleReader(r) == 3);
  CHECK(uses.SoleReader(w) == 3);
  CHECK(uses.readers(t) == std::vector<NodeId>{4});
  CHECK(uses.SoleReader(t) == kNoNode);  // also a graph output
  CHECK(uses.readers(y).empty());
  CHECK(uses.is_graph_output(y));
  CHECK(uses.is_graph_output(t));
  CHECK_FALSE(uses.is_graph_output(r));
  CHECK_FALSE(uses.is_graph_output(x));
}

TEST_CASE("Fresh names avoid the old graph, the new one and names handed out") {
  Graph old;
  const ValueId x = *old.AddInput("x", DataType::kFloat32, {4, 4});
  AddWeight(old, "w", {4, 4}, 1);
  REQUIRE(old.AddOutput(AddOp(old, op_names::kRelu, {x}, "x_r_0")).ok());
  GraphCopy copy(old);
  REQUIRE(copy.CopyInputs().ok());
  AddWeight(copy.graph(), "x_r_1", {1}, 2);

  // Numbered from 0: taken in the old graph, in the new one, then handed out.
  CHECK(copy.FreshName("x_r", NameStyle::kNumbered) == "x_r_2");
  CHECK(copy.FreshName("x_r", NameStyle::kNumbered) == "x_r_3");
  CHECK(copy.FreshName("z", NameStyle::kNumbered) == "z_0");
  // The base itself when free, else numbered from 2.
  CHECK(copy.FreshName("y", NameStyle::kBaseThenNumbered) == "y");
  CHECK(copy.FreshName("y", NameStyle::kBaseThenNumbered) == "y_2");
  CHECK(copy.FreshName("w", NameStyle::kBaseThenNumbered) == "w_2");  // a weight not copied yet
  CHECK(copy.FreshName("x", NameStyle::kBaseThenNumbered) == "x_2");

  int64_t next = 5;
  CHECK(NextFreeName("n", next, [](absl::string_view name) { return name == "n_5" || name == "n_6"; }) == "n_7");
  CHECK(next == 8);
}

TEST_CASE("Output names a graph makes up count on across nodes and skip names taken") {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {4, 4});
  AddWeight(g, "m_1", {1}, 1);
  const ValueId r = (*g.AddNode(Op(op_names::kRelu), {}, {x}, "relu"))[0];
  const ValueId m = (*g.AddNode(Op(op_names::kTanh), {}, {r}, "m"))[0];
  CHECK(g.value(r).name == "relu_0");
  CHECK(g.value(m).name == "m_2");
}

TEST_CASE("Weight-only: weights not fed at run time, nodes reading only them or only shapes") {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {1, 4, 6, 6});
  const ValueId w = AddWeight(g, "w", {4, 4}, 1);
  const ValueId fed = AddWeight(g, "fed", {4, 4}, 2);
  REQUIRE(g.MarkWeightAsInput(fed).ok());                          // an initializer that is also a graph input
  const ValueId ww = AddOp(g, op_names::kMatMul, {w, w}, "ww");    // node 0: weights only
  const ValueId wf = AddOp(g, op_names::kMatMul, {w, fed}, "wf");  // node 1: reads a run-time value
  const ValueId pool = AddOp(g, op_names::kC_pool, {x}, "pool",    // node 2: reads only x's shape
                             Params().Set("kernel", std::vector<int64_t>{3, 3}));
  const ValueId conv = AddOp(g, op_names::kConv2D, {x, pool}, "conv",  // node 3
                             Params().Set("grouping", "depthwise").Set("padding", "same"));
  REQUIRE(g.AddOutput(conv).ok());
  REQUIRE(g.AddOutput(AddOp(g, op_names::kAdd, {ww, wf}, "sum")).ok());  // node 4

  const WeightOnly found = FindWeightOnly(g);
  CHECK(found.nodes == std::vector<bool>{true, false, true, false, false});
  CHECK(found.values[w]);
  CHECK_FALSE(found.values[fed]);
  CHECK_FALSE(found.values[x]);
  CHECK(found.values[ww]);
  CHECK_FALSE(found.values[wf]);
  CHECK(found.values[pool]);
  CHECK_FALSE(found.values[conv]);

  // The rule on its own: absent inputs do not count; an opaque node is never weight-only.
  Node add;
  add.op = Op(op_names::kAdd);
  add.inputs = {0, kNoValue};
  CHECK(IsWeightOnlyNode(add, {true}));
  CHECK_FALSE(IsWeightOnlyNode(add, {false}));
  Node opaque;
  opaque.op = OpRegistry::Global().Opaque();
  opaque.inputs = {0};
  CHECK_FALSE(IsWeightOnlyNode(opaque, {true}));
}
