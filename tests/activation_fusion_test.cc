// FuseSpelledActivations: GELU spelled out as exporters write it becomes one Gelu, with
// the same outputs; it is written as ONNX Gelu from opset 20 and spelled out below.
#include <catch2/catch.hpp>

#include "taso/ir/executor.h"
#include "taso/ir/ops/names.h"
#include "taso/onnx/onnx_io.h"
#include "taso/passes/activation_fusion.h"
#include "test_util.h"

namespace taso {
namespace {

using testing::AddOp;
using testing::CountOps;

ValueId Scalar(Graph& g, const std::string& name, float v) { return *g.AddWeight(name, TensorData::Float({}, {v})); }

// y = GELU(x W) spelled out: x * (1 + erf(x / sqrt 2)) * 0.5, or with the 0.5 applied
// to x first, or x * (1/sqrt 2) in place of the division.
Graph SpelledGelu(bool half_first, bool multiply_by_inverse) {
  Graph g;
  const ValueId in = *g.AddInput("in", DataType::kFloat32, {4, 8});
  const ValueId x = AddOp(g, op_names::kMatMul, {in, testing::AddWeight(g, "W", {8, 8}, 1)}, "x");
  const ValueId scaled = multiply_by_inverse
                             ? AddOp(g, op_names::kScalarMul, {x, Scalar(g, "r", 0.70710678f)}, "scaled")
                             : AddOp(g, op_names::kDiv, {x, Scalar(g, "s", 1.41421356f)}, "scaled");
  const ValueId one_plus =
      AddOp(g, op_names::kAdd, {AddOp(g, op_names::kErf, {scaled}, "e"), Scalar(g, "one", 1)}, "one_plus");
  const ValueId half = Scalar(g, "half", 0.5f);
  const ValueId y = half_first
                        ? AddOp(g, op_names::kMul, {AddOp(g, op_names::kScalarMul, {x, half}, "h"), one_plus}, "y")
                        : AddOp(g, op_names::kScalarMul, {AddOp(g, op_names::kMul, {x, one_plus}, "p"), half}, "y");
  REQUIRE(g.AddOutput(y).ok());
  return g;
}

TEST_CASE("GELU spelled out becomes one Gelu with the same outputs") {
  for (bool half_first : {false, true})
    for (bool inverse : {false, true}) {
      INFO("0.5 first: " << half_first << ", times 1/sqrt 2: " << inverse);
      const Graph g = SpelledGelu(half_first, inverse);
      auto fused = FuseSpelledActivations(g);
      REQUIRE(fused.ok());
      CHECK(CountOps(*fused, op_names::kGelu) == 1);
      CHECK(CountOps(*fused, op_names::kErf) == 0);
      CHECK(fused->num_nodes() == 2);  // the product and the Gelu
      const TensorMap inputs = RandomInputs(g, 3);
      auto before = RunReference(g, inputs);
      auto after = RunReference(*fused, inputs);
      REQUIRE(before.ok());
      REQUIRE(after.ok());
      CHECK(MaxAbsDifference(*before, *after) < 1e-5);
      CHECK(after->count("y") == 1);  // the output keeps its name
    }
}

TEST_CASE("A GELU whose parts are read elsewhere, or with other constants, stays spelled out") {
  Graph g = SpelledGelu(false, false);
  REQUIRE(g.AddOutput(g.FindValue("e")).ok());  // the Erf's output is also the graph's
  auto kept = FuseSpelledActivations(g);
  REQUIRE(kept.ok());
  CHECK(CountOps(*kept, op_names::kGelu) == 0);

  Graph other;
  const ValueId x = *other.AddInput("x", DataType::kFloat32, {4, 8});
  const ValueId e =
      AddOp(other, op_names::kErf, {AddOp(other, op_names::kDiv, {x, Scalar(other, "s", 2.0f)}, "d")}, "e");
  const ValueId p =
      AddOp(other, op_names::kMul, {x, AddOp(other, op_names::kAdd, {e, Scalar(other, "one", 1)}, "a")}, "p");
  REQUIRE(other.AddOutput(AddOp(other, op_names::kScalarMul, {p, Scalar(other, "half", 0.5f)}, "y")).ok());
  auto not_gelu = FuseSpelledActivations(other);  // erf(x / 2): another function
  REQUIRE(not_gelu.ok());
  CHECK(CountOps(*not_gelu, op_names::kGelu) == 0);
}

TEST_CASE("Gelu is written as ONNX Gelu from opset 20 and spelled out below") {
  auto fused = FuseSpelledActivations(SpelledGelu(false, false));
  REQUIRE(fused.ok());
  for (int opset : {17, 21}) {
    INFO("opset " << opset);
    auto proto = ExportOnnx(NewOnnxModel(*fused, opset));
    REQUIRE(proto.ok());
    int gelu = 0, erf = 0;
    for (const auto& node : proto->graph().node()) {
      gelu += node.op_type() == op_names::kGelu;
      erf += node.op_type() == op_names::kErf;
    }
    CHECK(gelu == (opset >= 20 ? 1 : 0));
    CHECK(erf == (opset >= 20 ? 0 : 1));
    auto back = ImportOnnx(*proto);
    REQUIRE(back.ok());
    const TensorMap inputs = RandomInputs(*fused, 5);
    auto a = RunReference(*fused, inputs);
    auto b = RunReference(back->graph, inputs);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(MaxAbsDifference(*a, *b) < 1e-5);
  }
}

TEST_CASE("ONNX Gelu imports as Gelu; its tanh approximation stays opaque") {
  for (const std::string approximate : {"none", "tanh"}) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(20);
    onnx::GraphProto* g = m.mutable_graph();
    g->set_name("g");
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op_names::kGelu);
    n->add_input("x");
    n->add_output("y");
    OnnxExportNode::SetStr(n, "approximate", approximate);
    for (auto [info, name] : {std::pair{g->add_input(), "x"}, std::pair{g->add_output(), "y"}}) {
      info->set_name(name);
      auto* t = info->mutable_type()->mutable_tensor_type();
      t->set_elem_type(onnx::TensorProto::FLOAT);
      t->mutable_shape()->add_dim()->set_dim_value(4);
    }
    auto imported = ImportOnnx(m);
    REQUIRE(imported.ok());
    INFO("approximate " << approximate);
    REQUIRE(imported->graph.num_nodes() == 1);
    CHECK(imported->graph.node(0).op->is_opaque() == (approximate == "tanh"));
  }
}

}  // namespace
}  // namespace taso
