// Models ONNX Runtime's optimizer wrote (a session's optimizedModelFilePath) hold its own
// operators: LayerNormalization in ONNX's domain before opset 17, and `com.microsoft`'s
// fused ones. They are read, typed as ONNX Runtime types them (ops/runtime_schemas.cc)
// and written back, never refused.
#include <catch2/catch.hpp>

#include "taso/ir/ops/names.h"
#include "test_util.h"

using namespace taso;
using namespace taso::testing;

namespace {

constexpr char kRuntimeDomain[] = "com.microsoft";

onnx::NodeProto* AddRuntimeNode(onnx::ModelProto& m, const std::string& op_type, std::vector<std::string> inputs,
                                std::vector<std::string> outputs) {
  onnx::NodeProto* n = AddNode(m, op_type, std::move(inputs), std::move(outputs), op_type);
  n->set_domain(kRuntimeDomain);
  return n;
}

void ImportRuntimeDomain(onnx::ModelProto& m) {
  auto* o = m.add_opset_import();
  o->set_domain(kRuntimeDomain);
  o->set_version(1);
}

// The shape of the value named `name`, which must be known.
Shape KnownShape(const Graph& g, const std::string& name) {
  const ValueId v = g.FindValue(name);
  REQUIRE(v != kNoValue);
  REQUIRE(g.value(v).shape_known);
  return g.value(v).shape;
}

}  // namespace

TEST_CASE("ONNX Runtime's LayerNormalization before opset 17 is the library's, written back as read") {
  auto r = ImportOnnx(RuntimeLayerNormModel());
  REQUIRE(r.ok());
  CHECK(r->graph.node(0).op->name() == op_names::kLayerNormalization);
  CHECK(KnownShape(r->graph, "y") == Shape{2, 3, 4});
  auto exported = ExportOnnx(*r);
  INFO(exported.status().message());
  REQUIRE(exported.ok());  // the ONNX checker and strict shape inference ran
  CHECK(exported->graph().node(0).op_type() == op_names::kLayerNormalization);
  CHECK(exported->graph().node(0).domain().empty());
  CHECK(exported->opset_import(0).version() == 15);
  auto again = ImportOnnx(*exported);
  REQUIRE(again.ok());
  CHECK(again->graph.DebugString() == r->graph.DebugString());
}

TEST_CASE("What ONNX Runtime's fused operators compute is typed, and what follows is the library's") {
  auto m = NewModel(13);
  ImportRuntimeDomain(m);
  AddInput(m, "a", {2, 3, 4});
  AddFloatInit(m, "b", {2, 5, 4});
  AddInput(m, "x", {1, 3, 8, 8});
  AddFloatInit(m, "w", {4, 3, 3, 3});
  AddFloatInit(m, "gamma", {5});
  auto* product = AddRuntimeNode(m, "FusedMatMul", {"a", "b"}, {"p"});  // a x b^T: [2,3,5]
  SetIntAttr(product, "transB", 1);
  AddRuntimeNode(m, "SkipLayerNormalization", {"p", "p", "gamma"}, {"s", "", "", "sum"});
  AddNode(m, op_names::kAdd, {"s", "sum"}, {"y"}, "add_s");
  auto* conv = AddRuntimeNode(m, "FusedConv", {"x", "w"}, {"c"});  // [1,4,8,8]
  SetIntsAttr(conv, "pads", {1, 1, 1, 1});
  SetStringAttr(conv, "activation", "Relu");
  AddRuntimeNode(m, "QuickGelu", {"c"}, {"g"});
  AddNode(m, op_names::kRelu, {"g"}, {"z"}, "relu");
  AddOutput(m, "y");
  AddOutput(m, "z");
  auto r = ImportOnnx(m);
  REQUIRE(r.ok());
  CHECK(KnownShape(r->graph, "p") == Shape{2, 3, 5});
  CHECK(KnownShape(r->graph, "sum") == Shape{2, 3, 5});
  CHECK(KnownShape(r->graph, "y") == Shape{2, 3, 5});
  CHECK(KnownShape(r->graph, "c") == Shape{1, 4, 8, 8});
  CHECK(KnownShape(r->graph, "z") == Shape{1, 4, 8, 8});
  CHECK(CountOps(r->graph, op_names::kAdd) == 1);
  CHECK(CountOps(r->graph, op_names::kRelu) == 1);
  auto exported = ExportOnnx(*r);
  INFO(exported.status().message());
  REQUIRE(exported.ok());
}

TEST_CASE("A fused product whose axes move across its batch is typed by element only") {
  auto m = NewModel(13);
  ImportRuntimeDomain(m);
  AddInput(m, "a", {2, 3, 4});
  AddFloatInit(m, "b", {4, 5});
  SetIntAttr(AddRuntimeNode(m, "FusedMatMul", {"a", "b"}, {"p"}), "transBatchA", 1);
  AddNode(m, op_names::kRelu, {"p"}, {"y"}, "relu");
  AddOutput(m, "y");
  auto r = ImportOnnx(m);
  REQUIRE(r.ok());
  CHECK_FALSE(r->graph.value(r->graph.FindValue("p")).shape_known);
}

TEST_CASE("ONNX Runtime's mixed-precision normalizations are typed by their scale, and kept as read") {
  // x (float32) normalized with a float16 scale gives float16, then cast back to float32.
  auto m = NewModel(14);
  AddInput(m, "x", {2, 3, 8});
  for (const char* name : {"scale", "bias"}) {
    onnx::TensorProto* t = m.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT16);
    t->add_dims(8);
    t->set_raw_data(std::string(16, '\0'));
  }
  AddNode(m, "SimplifiedLayerNormalization", {"x", "scale"}, {"r"}, "rms");
  AddNode(m, op_names::kLayerNormalization, {"x", "scale", "bias"}, {"n"}, "norm");
  SetIntAttr(AddNode(m, "Cast", {"r"}, {"r32"}, "cast_r"), "to", onnx::TensorProto::FLOAT);
  SetIntAttr(AddNode(m, "Cast", {"n"}, {"n32"}, "cast_n"), "to", onnx::TensorProto::FLOAT);
  AddNode(m, op_names::kAdd, {"r32", "n32"}, {"y"}, "add");
  AddOutput(m, "y");
  auto r = ImportOnnx(m);
  INFO(r.status().message());
  REQUIRE(r.ok());
  for (const char* name : {"r", "n"}) {
    INFO(name);
    CHECK(KnownShape(r->graph, name) == Shape{2, 3, 8});
    CHECK(static_cast<int>(r->graph.value(r->graph.FindValue(name)).dtype) == onnx::TensorProto::FLOAT16);
  }
  CHECK(r->graph.node(r->graph.value(r->graph.FindValue("n")).producer).op->is_opaque());
  auto exported = ExportOnnx(*r);
  INFO(exported.status().message());
  REQUIRE(exported.ok());
}
