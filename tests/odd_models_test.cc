// Odd but valid ONNX models through import and export: omitted optional outputs and
// inputs, initializers that are also inputs, and the limit on declared tensor sizes.
#include <catch2/catch.hpp>

#include <limits>

#include "taso/ir/ops/names.h"
#include "test_util.h"

using namespace taso;
using namespace taso::testing;

namespace {

// x[3,1,4] -> LSTM (hidden 2; bias and sequence_lens omitted, initial_h given) whose
// outputs are ["", "Y_h"] -> Relu -> y.
onnx::ModelProto LstmOmittingY() {
  auto m = NewModel(13);
  AddInput(m, "x", {3, 1, 4});
  AddInput(m, "h0", {1, 1, 2});
  AddFloatInit(m, "W", {1, 8, 4}, 0.1f);
  AddFloatInit(m, "R", {1, 8, 2}, 0.2f);
  auto* lstm = AddNode(m, "LSTM", {"x", "W", "R", "", "", "h0"}, {"", "Y_h"}, "lstm");
  SetIntAttr(lstm, "hidden_size", 2);
  AddNode(m, op_names::kRelu, {"Y_h"}, {"y"}, "relu");
  AddOutput(m, "y");
  return m;
}

const onnx::NodeProto* FindNode(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& n : g.node())
    if (n.name() == name) return &n;
  return nullptr;
}

bool Contains(const std::vector<ValueId>& values, ValueId v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

}  // namespace

TEST_CASE("An opaque node's omitted middle output has no value and is written back omitted") {
  const onnx::ModelProto m = LstmOmittingY();
  auto imported = ImportOnnx(m);
  REQUIRE(imported.ok());
  const Graph& g = imported->graph;
  REQUIRE(g.Validate().ok());
  const ValueId h = g.FindValue("Y_h");
  REQUIRE(h != kNoValue);
  const Node& lstm = g.node(g.value(h).producer);
  REQUIRE(lstm.op->is_opaque());
  CHECK(lstm.outputs == std::vector<ValueId>{h});
  const std::vector<OutputType> types = g.OutputTypes(lstm);
  REQUIRE(types.size() == 1);
  CHECK(types[0].shape == Shape{1, 1, 2});
  // The omitted optional inputs stay absent, in their places.
  REQUIRE(lstm.inputs.size() == 6);
  CHECK(lstm.inputs[3] == kNoValue);
  CHECK(lstm.inputs[4] == kNoValue);
  CHECK(lstm.inputs[5] == g.FindValue("h0"));

  auto exported = ExportOnnx(*imported);
  REQUIRE(exported.ok());
  const onnx::NodeProto* written = FindNode(exported->graph(), "lstm");
  REQUIRE(written != nullptr);
  CHECK(written->SerializeAsString() == m.graph().node(0).SerializeAsString());
  auto again = ImportOnnx(*exported);
  REQUIRE(again.ok());
  CHECK(again->graph.DebugString() == g.DebugString());
}

TEST_CASE("A library operator's node with an omitted middle output stays opaque") {
  auto m = NewModel(13);
  AddInput(m, "x", {4, 6});
  auto* split = AddNode(m, op_names::kSplit, {"x"}, {"a", "", "c"}, "split");
  SetIntAttr(split, "axis", 1);
  AddOutput(m, "a");
  AddOutput(m, "c");
  auto imported = ImportOnnx(m);
  REQUIRE(imported.ok());
  const Graph& g = imported->graph;
  const Node& node = g.node(g.value(g.FindValue("a")).producer);
  CHECK(node.op->is_opaque());
  CHECK(node.outputs == std::vector<ValueId>{g.FindValue("a"), g.FindValue("c")});
  auto exported = ExportOnnx(*imported);
  REQUIRE(exported.ok());
  CHECK(exported->graph().node(0).SerializeAsString() == m.graph().node(0).SerializeAsString());
}

TEST_CASE("An opaque node's values must be named as its ONNX node names its outputs") {
  auto proto = std::make_shared<onnx::NodeProto>();
  proto->set_name("lstm");
  proto->set_op_type("LSTM");
  proto->add_output("");
  proto->add_output("Y_h");
  Graph g;
  const OutputType type{DataType::kFloat32, {1, 1, 2}};
  auto wrong = g.AddOpaqueNode(proto, {}, {"", "Y_h"}, {type, type});
  REQUIRE_FALSE(wrong.ok());
  CHECK_THAT(std::string(wrong.status().message()), Catch::Contains("its ONNX node writes [Y_h]"));
  CHECK_FALSE(g.AddOpaqueNode(proto, {}, {"other"}, {type}).ok());
  auto right = g.AddOpaqueNode(proto, {}, {"Y_h"}, {type});
  REQUIRE(right.ok());
  CHECK(right->size() == 1);
  CHECK(g.value((*right)[0]).name == "Y_h");
}

TEST_CASE("An initializer that is also an input is a run-time value, not a constant") {
  auto m = NewModel(13);
  AddInput(m, "x", {1, 3, 8, 8});
  AddFloatInit(m, "w", {4, 3, 3, 3});
  AddInput(m, "w", {4, 3, 3, 3});
  AddInt64Init(m, "shape", {1, -1});
  AddInput(m, "shape", {2}, onnx::TensorProto::INT64);
  AddNode(m, "Conv", {"x", "w"}, {"c"}, "conv");
  AddNode(m, op_names::kReshape, {"c", "shape"}, {"y"}, "reshape");
  AddOutput(m, "y");
  auto imported = ImportOnnx(m);
  REQUIRE(imported.ok());
  const Graph& g = imported->graph;
  const ValueId w = g.FindValue("w");
  CHECK(g.value(w).is_weight());
  CHECK(g.value(w).is_graph_input);
  CHECK_FALSE(g.value(w).is_constant());
  CHECK(g.ConstantData(w) == nullptr);
  CHECK(Contains(g.inputs(), w));
  // A shape that is fed at run time is unknown ahead of time: the Reshape stays opaque.
  CHECK(g.node(g.value(g.FindValue("y")).producer).op->is_opaque());

  auto exported = ExportOnnx(*imported);
  REQUIRE(exported.ok());
  std::vector<std::string> inputs, initializers;
  for (const auto& i : exported->graph().input()) inputs.push_back(i.name());
  for (const auto& i : exported->graph().initializer()) initializers.push_back(i.name());
  CHECK(inputs == std::vector<std::string>{"x", "w", "shape"});
  CHECK(initializers == std::vector<std::string>{"w", "shape"});
}

TEST_CASE("A plain initializer is a constant") {
  Graph g;
  const ValueId w = AddWeight(g, "w", {2, 2}, 1);
  CHECK(g.value(w).is_constant());
  CHECK(g.ConstantData(w) == g.value(w).data.get());
  REQUIRE(g.MarkWeightAsInput(w).ok());
  CHECK_FALSE(g.value(w).is_constant());
  CHECK(g.ConstantData(w) == nullptr);
}

TEST_CASE("Element counts that overflow 64 bits are told apart") {
  CHECK(CheckedNumElements({3, 4}) == 12);
  CHECK(CheckedNumElements({}) == 1);
  CHECK(CheckedNumElements({0, int64_t{1} << 62}) == 0);
  CHECK_FALSE(CheckedNumElements({int64_t{1} << 40, int64_t{1} << 40}).has_value());
  CHECK_FALSE(CheckedNumElements({2, -1}).has_value());
  Graph g;
  auto input = g.AddInput("x", DataType::kFloat32, {int64_t{1} << 32, int64_t{1} << 32});
  REQUIRE_FALSE(input.ok());
  CHECK_THAT(std::string(input.status().message()), Catch::Contains("element count"));
}

TEST_CASE("Declared tensors beyond the memory limit are refused before they are read") {
  auto error = [](const onnx::ModelProto& m, int64_t limit = kDefaultMaxMemoryBytes) {
    ImportOptions options;
    options.max_memory_bytes = limit;
    auto r = ImportOnnx(m, options);
    return r.ok() ? std::string() : std::string(r.status().message());
  };
  auto relu = [](std::vector<int64_t> shape) {
    auto m = NewModel(13);
    AddInput(m, "x", shape);
    AddNode(m, op_names::kRelu, {"x"}, {"y"}, "relu");
    AddOutput(m, "y");
    return m;
  };
  // An input of 3e10 floats: 120 GB.
  const std::string huge = error(relu({30000, 1000, 1000}));
  CHECK_THAT(huge, Catch::Contains("need 120.0 GB") && Catch::Contains("'x' [30000,1000,1000], 120.0 GB") &&
                       Catch::Contains("limit of 16.0 GB") && Catch::Contains("--max-memory-gb"));
  // An intermediate of 3e10 floats from small inputs.
  auto m = NewModel(13);
  AddInput(m, "a", {100000, 1});
  AddInput(m, "b", {1, 300000});
  AddNode(m, op_names::kMatMul, {"a", "b"}, {"y"}, "product");
  AddOutput(m, "y");
  CHECK_THAT(error(m), Catch::Contains("'y' [100000,300000], 120.0 GB"));
  // Dimensions whose product overflows.
  CHECK_THAT(error(relu({int64_t{1} << 40, int64_t{1} << 40})), Catch::Contains("more than 9.2e9 GB"));
  // An initializer counts by its declared dimensions.
  auto init = NewModel(13);
  AddInput(init, "x", {2});
  auto* t = init.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::DOUBLE);
  for (int64_t d : {100000, 100000}) t->add_dims(d);
  AddNode(init, op_names::kRelu, {"x"}, {"y"}, "relu");
  AddOutput(init, "y");
  CHECK_THAT(error(init), Catch::Contains("'w' [100000,100000], 80.0 GB"));
  // The limit is the caller's.
  CHECK(error(relu({4, 4})).empty());
  CHECK_THAT(error(relu({4, 4}), 100), Catch::Contains("limit of 100 bytes"));
}

TEST_CASE("An initializer whose element count overflows is refused, not read as empty") {
  auto m = NewModel(13);
  AddInput(m, "x", {2});
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {int64_t{1} << 62, int64_t{4}}) t->add_dims(d);  // 2^64 elements: wraps to 0
  t->set_raw_data("");
  AddNode(m, op_names::kRelu, {"x"}, {"y"}, "relu");
  AddOutput(m, "y");
  ImportOptions options;
  options.max_memory_bytes = std::numeric_limits<int64_t>::max();
  auto r = ImportOnnx(m, options);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(std::string(r.status().message()), Catch::Contains("more elements than a 64-bit count holds"));
}
