// What import does not copy of a large model: its weights' values for shape inference
// and for its shell, and weights it has read already when it reads the model again.
#include <catch2/catch.hpp>

#include "onnx/shape_inference/implementation.h"
#include "taso/ir/onnx_tensor.h"
#include "taso/ir/ops/names.h"
#include "taso/onnx/onnx_io.h"
#include "taso/onnx/onnx_model_copy.h"
#include "test_util.h"

using namespace taso;
using namespace taso::testing;

namespace {

// x[4,64] . W[64,128] -> Reshape to the shape held by an int64 initializer -> y; a small
// bias b[128] added first.
onnx::ModelProto ProductThenReshape() {
  auto m = NewModel(13);
  m.set_producer_name("copy test");
  AddInput(m, "x", {4, 64});
  AddFloatInit(m, "W", {64, 128});
  AddFloatInit(m, "b", {128});
  AddInt64Init(m, "shape", {8, 2, 32});
  AddNode(m, op_names::kMatMul, {"x", "W"}, {"p"}, "product");
  AddNode(m, op_names::kAdd, {"p", "b"}, {"s"}, "bias");
  AddNode(m, op_names::kReshape, {"s", "shape"}, {"y"}, "reshape");
  AddOutput(m, "y");
  return m;
}

const onnx::TensorProto& Initializer(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& init : m.graph().initializer())
    if (init.name() == name) return init;
  FAIL("no initializer " << name);
  return m.graph().initializer(0);
}

}  // namespace

TEST_CASE("A copy for shape inference leaves out large weights' values only", "[onnx]") {
  const onnx::ModelProto model = ProductThenReshape();
  onnx::ModelProto copy = CopyForShapeInference(model);
  REQUIRE(copy.graph().initializer_size() == 3);
  const onnx::TensorProto& w = Initializer(copy, "W");
  CHECK(w.raw_data().empty());
  CHECK(w.float_data_size() == 0);
  CHECK(w.dims_size() == 2);
  CHECK(w.data_type() == onnx::TensorProto::FLOAT);
  CHECK(Initializer(copy, "b").SerializeAsString() == Initializer(model, "b").SerializeAsString());
  CHECK(Initializer(copy, "shape").SerializeAsString() == Initializer(model, "shape").SerializeAsString());
  CHECK(copy.graph().node_size() == model.graph().node_size());
  CHECK(copy.producer_name() == "copy test");
  CHECK(copy.opset_import_size() == model.opset_import_size());

  // Shape inference reads the same of both, the Reshape's target included.
  onnx::ModelProto full = model;
  onnx::shape_inference::InferShapes(full);
  onnx::shape_inference::InferShapes(copy);
  REQUIRE(copy.graph().value_info_size() == full.graph().value_info_size());
  for (int i = 0; i < full.graph().value_info_size(); ++i)
    CHECK(copy.graph().value_info(i).SerializeAsString() == full.graph().value_info(i).SerializeAsString());
}

TEST_CASE("A model's shell keeps every field but the graph's nodes, weights and value types", "[onnx]") {
  onnx::ModelProto model = ProductThenReshape();
  model.mutable_graph()->add_value_info()->set_name("p");
  auto* meta = model.add_metadata_props();
  meta->set_key("k");
  meta->set_value("v");
  const onnx::ModelProto shell = ShellCopy(model);
  CHECK(shell.graph().node_size() == 0);
  CHECK(shell.graph().initializer_size() == 0);
  CHECK(shell.graph().value_info_size() == 0);
  CHECK(shell.graph().input_size() == 1);
  CHECK(shell.graph().output_size() == 1);
  CHECK(shell.graph().name() == model.graph().name());
  CHECK(shell.metadata_props_size() == 1);
  CHECK(shell.ir_version() == model.ir_version());
  CHECK(shell.producer_name() == "copy test");
}

TEST_CASE("A model read again shares the weights it has read where their values agree", "[onnx]") {
  onnx::ModelProto model = ProductThenReshape();
  auto first = ImportOnnx(model);
  REQUIRE(first.ok());
  const Graph& g = first->graph;
  const TensorDataPtr w = g.value(g.FindValue("W")).data;
  CHECK(HoldsValuesOf(*w, Initializer(model, "W")));

  // One value of b changed: W is shared, b is read afresh.
  onnx::TensorProto& b = *model.mutable_graph()->mutable_initializer(1);
  REQUIRE(b.name() == "b");
  if (b.has_raw_data()) {
    std::string raw = b.raw_data();
    raw[0] ^= 1;
    b.set_raw_data(raw);
  } else {
    b.set_float_data(0, b.float_data(0) + 1);
  }
  CHECK_FALSE(HoldsValuesOf(*g.value(g.FindValue("b")).data, b));
  ImportOptions options;
  options.shared_weights = &g;
  auto again = ImportOnnx(model, options);
  REQUIRE(again.ok());
  const Graph& h = again->graph;
  CHECK(h.value(h.FindValue("W")).data == w);
  CHECK(h.value(h.FindValue("b")).data != g.value(g.FindValue("b")).data);
  CHECK_FALSE(h.value(h.FindValue("b")).data->SameContent(*g.value(g.FindValue("b")).data));
}
