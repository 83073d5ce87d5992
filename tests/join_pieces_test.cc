// JoinNestedPieces: nested concatenations and splits become one, a concatenation of a
// split's pieces its input, and the outputs stay what and where they were. And
// SplitSizesAsParameters, which gives such joins the Splits exporters write.
#include <catch2/catch.hpp>

#include "taso/ir/executor.h"
#include "taso/ir/join_pieces.h"
#include "taso/ir/ops/names.h"
#include "test_util.h"

namespace taso {
namespace {

using testing::AddOp;
using testing::CountOps;

Graph Joined(const Graph& g) {
  auto joined = JoinNestedPieces(g);
  REQUIRE(joined.ok());
  const TensorMap inputs = RandomInputs(g, 3);
  auto before = RunReference(g, inputs);
  auto after = RunReference(*joined, inputs);
  REQUIRE(before.ok());
  REQUIRE(after.ok());
  CHECK(MaxAbsDifference(*before, *after) == 0);  // the same outputs, under the same names
  return *std::move(joined);
}

std::vector<ValueId> SplitOf(Graph& g, ValueId x, Params params) {
  auto outs = g.AddNode(testing::Op(op_names::kSplit), std::move(params), {x});
  REQUIRE(outs.ok());
  return *outs;
}

TEST_CASE("Nested concatenations along one axis become one") {
  Graph g;
  std::vector<ValueId> x;
  for (const char* name : {"a", "b", "c", "d"}) x.push_back(*g.AddInput(name, DataType::kFloat32, {1, 4}));
  const ValueId ab = AddOp(g, op_names::kConcat, {x[0], x[1]}, "ab", testing::Axis(0));
  const ValueId abc =
      AddOp(g, op_names::kConcat, {ab, x[2]}, "abc", testing::Axis(-2));  // the same axis, counted from the end
  REQUIRE(
      g.AddOutput(AddOp(g, op_names::kRelu, {AddOp(g, op_names::kConcat, {x[3], abc}, "dabc", testing::Axis(0))}, "y"))
          .ok());
  const Graph joined = Joined(g);
  CHECK(CountOps(joined, op_names::kConcat) == 1);
  CHECK(joined.num_nodes() == 2);

  SECTION("not where the inner one is read elsewhere or joins along another axis") {
    Graph h;
    const ValueId a = *h.AddInput("a", DataType::kFloat32, {2, 2}), b = *h.AddInput("b", DataType::kFloat32, {2, 2});
    const ValueId rows = AddOp(h, op_names::kConcat, {a, b}, "rows", testing::Axis(0));
    REQUIRE(h.AddOutput(AddOp(h, op_names::kConcat, {rows, rows}, "wide", testing::Axis(1))).ok());
    REQUIRE(h.AddOutput(AddOp(h, op_names::kConcat, {rows, a}, "tall", testing::Axis(0))).ok());
    CHECK(Joined(h).num_nodes() == h.num_nodes());
  }
}

TEST_CASE("A split of a split's piece along one axis becomes one split, its outputs named as before") {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {6, 4});
  const std::vector<ValueId> halves = SplitOf(g, x, testing::Pieces(0, {2, 4}));
  const std::vector<ValueId> quarters = SplitOf(g, halves[1], testing::Pieces(0, {1, 3}));
  REQUIRE(g.AddOutput(halves[0]).ok());
  for (ValueId q : quarters) REQUIRE(g.AddOutput(AddOp(g, op_names::kRelu, {q}, "r" + g.value(q).name)).ok());
  const Graph joined = Joined(g);
  REQUIRE(CountOps(joined, op_names::kSplit) == 1);
  for (NodeId n = 0; n < joined.num_nodes(); ++n)
    if (joined.node(n).op == testing::Op(op_names::kSplit))
      CHECK(joined.node(n).params.Ints("sizes") == std::vector<int64_t>{2, 1, 3});

  SECTION("not along another axis") {
    Graph h;
    const ValueId y = *h.AddInput("y", DataType::kFloat32, {4, 4});
    const std::vector<ValueId> rows = SplitOf(h, y, testing::Pieces(0, {2, 2}));
    for (ValueId v : SplitOf(h, rows[0], testing::Pieces(1, {2, 2}))) REQUIRE(h.AddOutput(v).ok());
    REQUIRE(h.AddOutput(rows[1]).ok());
    CHECK(CountOps(Joined(h), op_names::kSplit) == 2);
  }
}

TEST_CASE("A concatenation of all of a split's pieces in order is the split's input") {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {4, 6});
  const std::vector<ValueId> parts = SplitOf(g, x, testing::Pieces(1, {2, 4}));
  const ValueId whole = AddOp(g, op_names::kConcat, {parts[0], parts[1]}, "whole", testing::Axis(1));
  REQUIRE(g.AddOutput(AddOp(g, op_names::kRelu, {whole}, "y")).ok());
  const Graph joined = Joined(g);
  CHECK(joined.num_nodes() == 1);
  CHECK(CountOps(joined, op_names::kRelu) == 1);

  SECTION("not in another order, nor where the concatenation is a graph output") {
    Graph h;
    const ValueId y = *h.AddInput("y", DataType::kFloat32, {4, 6});
    const std::vector<ValueId> p = SplitOf(h, y, testing::Pieces(1, {3, 3}));
    REQUIRE(h.AddOutput(AddOp(h, op_names::kConcat, {p[1], p[0]}, "swapped", testing::Axis(1))).ok());
    CHECK(Joined(h).num_nodes() == 2);
    Graph k;
    const ValueId z = *k.AddInput("z", DataType::kFloat32, {4, 6});
    const std::vector<ValueId> q = SplitOf(k, z, testing::Pieces(1, {3, 3}));
    REQUIRE(k.AddOutput(AddOp(k, op_names::kConcat, {q[0], q[1]}, "out", testing::Axis(1))).ok());
    CHECK(Joined(k).num_nodes() == 2);
  }
}

// A Split reading its sizes from a Constant node, as exporters write one from opset 13.
std::vector<ValueId> SplitBySizesInput(Graph& g, ValueId x, int64_t axis, const std::vector<int64_t>& sizes,
                                       ValueId* sizes_value = nullptr) {
  auto constant = g.AddNode(testing::Op(op_names::kConstant),
                            Params().Set("value", TensorData::Int64({static_cast<int64_t>(sizes.size())}, sizes)), {});
  REQUIRE(constant.ok());
  if (sizes_value != nullptr) *sizes_value = (*constant)[0];
  auto outs = g.AddNode(testing::Op(op_names::kSplit), testing::Axis(axis), {x, (*constant)[0]});
  REQUIRE(outs.ok());
  return *outs;
}

TEST_CASE("A Split's constant sizes input becomes its parameter, so that nested ones join") {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {2, 9});
  const std::vector<ValueId> outer = SplitBySizesInput(g, x, 1, {6, 3});
  const std::vector<ValueId> inner = SplitBySizesInput(g, outer[0], -1, {2, 4});
  for (ValueId v : {inner[0], inner[1], outer[1]})
    REQUIRE(g.AddOutput(AddOp(g, op_names::kRelu, {v}, "r" + g.value(v).name)).ok());
  CHECK(Joined(g).num_nodes() == g.num_nodes());  // as imported, the sizes are an input: left alone

  auto converted = SplitSizesAsParameters(g);
  REQUIRE(converted.ok());
  CHECK(CountOps(*converted, op_names::kConstant) == 0);  // nothing reads the sizes any more
  for (NodeId n = 0; n < converted->num_nodes(); ++n) {
    const Node& node = converted->node(n);
    if (node.op != testing::Op(op_names::kSplit)) continue;
    CHECK(node.inputs.size() == 1);
    CHECK((node.params.Ints("sizes") == std::vector<int64_t>{6, 3} ||
           node.params.Ints("sizes") == std::vector<int64_t>{2, 4}));
  }
  const Graph joined = Joined(*converted);
  REQUIRE(CountOps(joined, op_names::kSplit) == 1);
  for (NodeId n = 0; n < joined.num_nodes(); ++n)
    if (joined.node(n).op == testing::Op(op_names::kSplit))
      CHECK(joined.node(n).params.Ints("sizes") == std::vector<int64_t>{2, 4, 3});
  const TensorMap inputs = RandomInputs(g, 5);
  auto before = RunReference(g, inputs), after = RunReference(joined, inputs);
  REQUIRE(before.ok());
  REQUIRE(after.ok());
  CHECK(MaxAbsDifference(*before, *after) == 0);

  SECTION("a constant read as data too stays") {
    Graph h;
    const ValueId y = *h.AddInput("y", DataType::kFloat32, {2, 2});
    ValueId sizes = kNoValue;
    const std::vector<ValueId> parts = SplitBySizesInput(h, y, 1, {1, 1}, &sizes);
    for (ValueId v : parts) REQUIRE(h.AddOutput(v).ok());
    REQUIRE(h.AddOutput(sizes).ok());
    auto kept = SplitSizesAsParameters(h);
    REQUIRE(kept.ok());
    CHECK(CountOps(*kept, op_names::kConstant) == 1);
    CHECK(CountOps(*kept, op_names::kSplit) == 1);
  }
}

}  // namespace
}  // namespace taso
