// Graph IR and the reference executor.
#include <catch2/catch.hpp>

#include "taso/ir/executor.h"
#include "taso/ir/ops/names.h"
#include "test_util.h"

using namespace taso;
using namespace taso::testing;

namespace {

// y = relu(x @ w1) + (x @ w2), with the two branches added in the order given.
Graph TwoBranches(bool swap_order, const std::string& prefix, float w2_value = 0.25f) {
  Graph g;
  ValueId x = *g.AddInput("x", DataType::kFloat32, {4, 8});
  ValueId w1 = *g.AddWeight(prefix + "w1", TensorData::Float({8, 8}, std::vector<float>(64, 0.5f)));
  ValueId w2 = *g.AddWeight(prefix + "w2", TensorData::Float({8, 8}, std::vector<float>(64, w2_value)));
  ValueId a, b;
  if (!swap_order) {
    a = (*g.AddNode(Op(op_names::kMatMul), {}, {x, w1}, prefix + "mm1"))[0];
    b = (*g.AddNode(Op(op_names::kMatMul), {}, {x, w2}, prefix + "mm2"))[0];
  } else {
    b = (*g.AddNode(Op(op_names::kMatMul), {}, {x, w2}, prefix + "mm2"))[0];
    a = (*g.AddNode(Op(op_names::kMatMul), {}, {x, w1}, prefix + "mm1"))[0];
  }
  ValueId r = (*g.AddNode(Op(op_names::kRelu), {}, {a}, prefix + "relu"))[0];
  ValueId y = (*g.AddNode(Op(op_names::kAdd), {}, {r, b}, prefix + "add"))[0];
  REQUIRE(g.AddOutput(y).ok());
  return g;
}

}  // namespace

TEST_CASE("The structural hash ignores numbering and names but not the computation") {
  const uint64_t h = TwoBranches(false, "a_").StructuralHash();
  CHECK(TwoBranches(true, "a_").StructuralHash() == h);
  CHECK(TwoBranches(true, "other_").StructuralHash() == h);
  CHECK(TwoBranches(false, "a_", 0.75f).StructuralHash() != h);  // different weights

  Graph g = TwoBranches(false, "a_");
  Graph changed;
  ValueId x = *changed.AddInput("x", DataType::kFloat32, {4, 8});
  ValueId w = *changed.AddWeight("w", TensorData::Float({8, 8}, std::vector<float>(64, 0.5f)));
  ValueId t = (*changed.AddNode(Op(op_names::kMatMul), {}, {x, w}))[0];
  REQUIRE(changed.AddOutput((*changed.AddNode(Op(op_names::kSigmoid), {}, {t}))[0]).ok());
  const uint64_t before = changed.StructuralHash();
  CHECK(before != g.StructuralHash());
  // A dead-end node changes the hash too: the graph computes something more.
  REQUIRE(changed.AddNode(Op(op_names::kTanh), {}, {t}).ok());
  CHECK(changed.StructuralHash() != before);
}

TEST_CASE("A graph's memory estimate grows with its nodes and leaves shared weights out") {
  auto relu_chain = [](int nodes) {
    Graph g;
    ValueId v = *g.AddInput("x", DataType::kFloat32, {1, 4});
    for (int i = 0; i < nodes; ++i) v = (*g.AddNode(Op(op_names::kRelu), {}, {v}))[0];
    REQUIRE(g.AddOutput(v).ok());
    return g;
  };
  const int64_t small = relu_chain(1000).ApproxBytes(), large = relu_chain(4000).ApproxBytes();
  CHECK(small > 1000 * static_cast<int64_t>(sizeof(Node) + sizeof(Value)));
  CHECK(large > 3 * small);
  CHECK(large < 5 * small);
  // A large weight is shared by the graph's copies, so it adds no more than its value.
  Graph g = relu_chain(10);
  const int64_t before = g.ApproxBytes();
  REQUIRE(g.AddWeight("w", TensorData::Float({1024, 1024}, std::vector<float>(1024 * 1024, 1.0f))).ok());
  CHECK(g.ApproxBytes() - before < 1024);
}

TEST_CASE("Topological order puts producers first and is deterministic") {
  Graph g = TwoBranches(true, "p_");
  auto order = g.TopologicalOrder();
  REQUIRE(order.ok());
  std::vector<bool> done(g.num_values(), false);
  for (ValueId v : g.inputs()) done[v] = true;
  for (ValueId v : g.weights()) done[v] = true;
  for (NodeId n : *order) {
    for (ValueId in : g.node(n).inputs) REQUIRE(done[in]);
    for (ValueId out : g.node(n).outputs) done[out] = true;
  }
  CHECK(*order == *g.TopologicalOrder());
  CHECK(g.DebugString() == TwoBranches(true, "p_").DebugString());
}

TEST_CASE("Adding a node checks its shapes and names") {
  Graph g;
  ValueId x = *g.AddInput("x", DataType::kFloat32, {4, 8});
  ValueId y = *g.AddInput("y", DataType::kFloat32, {5, 8});
  auto bad = g.AddNode(Op(op_names::kMatMul), {}, {x, y}, "mm");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()), Catch::Contains("node 'mm' (MatMul): inner dimensions differ"));
  CHECK_FALSE(g.AddInput("x", DataType::kFloat32, {1}).ok());  // a name defined twice
  CHECK_FALSE(g.AddNode(Op(op_names::kRelu), {}, {x}, "r", {"y"}).ok());
}

TEST_CASE("The reference executor computes, and reports what it cannot") {
  Graph g = TwoBranches(false, "e_");
  TensorMap inputs;
  inputs["x"] = RandomTensor({4, 8}, 1);
  auto out = RunReference(g, inputs);
  REQUIRE(out.ok());
  const Tensor<float>& y = out->begin()->second;
  for (int64_t i = 0; i < 4; ++i) {
    double s = 0;
    for (int64_t k = 0; k < 8; ++k) s += inputs["x"].data[i * 8 + k];
    const double expected = std::max(0.0, 0.5 * s) + 0.25 * s;
    for (int64_t j = 0; j < 8; ++j) REQUIRE(y.data[i * 8 + j] == Approx(expected).margin(1e-5));
  }
  CHECK(MaxAbsDifference(*out, *out) == 0);

  auto missing = RunReference(g, {});
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(std::string(missing.status().message()), Catch::Contains("no data for input 'x'"));
  inputs["x"] = RandomTensor({4, 9}, 1);
  auto wrong = RunReference(g, inputs);
  REQUIRE_FALSE(wrong.ok());
  CHECK_THAT(std::string(wrong.status().message()), Catch::Contains("has shape [4,9], the graph expects [4,8]"));
}

TEST_CASE("Random inputs are deterministic per seed and within [-1, 1]") {
  Graph g = TwoBranches(false, "r_");
  auto a = RandomInputs(g, 3), b = RandomInputs(g, 3), c = RandomInputs(g, 4);
  CHECK(a.at("x").data == b.at("x").data);
  CHECK(a.at("x").data != c.at("x").data);
  for (float v : a.at("x").data) CHECK((v >= -1 && v <= 1));
}
