// Model-local functions: import replaces each call by the function's nodes, so that the
// graph computes what the model with those nodes written out does and the search sees
// them; a call its function cannot stand in for is kept opaque, and the reason said.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "taso/onnx/onnx_inline_functions.h"
#include "test_util.h"

using namespace taso;
using namespace taso::testing;

namespace {

constexpr char kDomain[] = "local.functions";

onnx::FunctionProto* AddFunction(onnx::ModelProto& m, const std::string& name, std::vector<std::string> inputs,
                                 std::vector<std::string> outputs, int opset = 13) {
  onnx::FunctionProto* f = m.add_functions();
  f->set_name(name);
  f->set_domain(kDomain);
  for (auto& i : inputs) f->add_input(i);
  for (auto& o : outputs) f->add_output(o);
  auto* import = f->add_opset_import();
  import->set_domain("");
  import->set_version(opset);
  return f;
}

onnx::NodeProto* AddBodyNode(onnx::FunctionProto* f, const std::string& op_type, std::vector<std::string> inputs,
                             std::vector<std::string> outputs, const std::string& domain = "") {
  onnx::NodeProto* n = f->add_node();
  n->set_op_type(op_type);
  n->set_domain(domain);
  for (auto& i : inputs) n->add_input(i);
  for (auto& o : outputs) n->add_output(o);
  return n;
}

onnx::NodeProto* AddCall(onnx::ModelProto& m, const std::string& function, std::vector<std::string> inputs,
                         std::vector<std::string> outputs, const std::string& name) {
  onnx::NodeProto* n = AddNode(m, function, std::move(inputs), std::move(outputs), name);
  n->set_domain(kDomain);
  return n;
}

void SetFloatAttr(onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

// An attribute of a function's node that takes the call's attribute `ref`.
void SetRefAttr(onnx::NodeProto* n, const std::string& name, const std::string& ref) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_ref_attr_name(ref);
}

// x [2,8] -> two dense layers with hard sigmoids of slopes 0.1 and `second_slope` -> y; as calls of a
// function "Dense" (MatMul, Add, HardSigmoid(alpha = the call's "slope")) or written out.
onnx::ModelProto TwoDenseLayers(bool as_calls, float second_slope = 0.2f) {
  auto m = NewModel(13);
  AddInput(m, "x", {2, 8});
  AddFloatInit(m, "w1", {8, 8}, 0.3f);
  AddFloatInit(m, "b1", {8}, -0.2f);
  AddFloatInit(m, "w2", {8, 8}, -0.4f);
  AddFloatInit(m, "b2", {8}, 0.1f);
  const std::vector<std::pair<std::string, float>> layers = {{"1", 0.1f}, {"2", second_slope}};
  std::string in = "x";
  for (const auto& [k, slope] : layers) {
    const std::string out = k == "2" ? "y" : "h";
    if (as_calls) {
      SetFloatAttr(AddCall(m, "Dense", {in, "w" + k, "b" + k}, {out}, "dense" + k), "slope", slope);
    } else {
      AddNode(m, "MatMul", {in, "w" + k}, {"t" + k});
      AddNode(m, "Add", {"t" + k, "b" + k}, {"s" + k});
      SetFloatAttr(AddNode(m, "HardSigmoid", {"s" + k}, {out}), "alpha", slope);
    }
    in = out;
  }
  AddOutput(m, "y");
  if (!as_calls) return m;
  auto* dense = AddFunction(m, "Dense", {"X", "W", "B"}, {"Y"});
  dense->add_attribute("slope");
  AddBodyNode(dense, "MatMul", {"X", "W"}, {"t"});
  AddBodyNode(dense, "Add", {"t", "B"}, {"s"});
  SetRefAttr(AddBodyNode(dense, "HardSigmoid", {"s"}, {"Y"}), "alpha", "slope");
  auto* import = m.add_opset_import();
  import->set_domain(kDomain);
  import->set_version(1);
  return m;
}

// Sets a field ONNX 1.12's classes do not know (of IR 9 and 10), as a newer exporter writes it.
void SetUnknownField(google::protobuf::Message* message, int number, const std::string& bytes) {
  message->GetReflection()->MutableUnknownFields(message)->AddLengthDelimited(number, bytes);
}

OnnxModel Imported(const onnx::ModelProto& m) {
  absl::StatusOr<OnnxModel> model = ImportOnnx(m);
  INFO(model.status());
  REQUIRE(model.ok());
  return *std::move(model);
}

}  // namespace

TEST_CASE("Calls of a model's functions become the functions' nodes, and no function is written") {
  const OnnxModel plain = Imported(TwoDenseLayers(false));
  const OnnxModel inlined = Imported(TwoDenseLayers(true));
  CHECK(inlined.inlined_functions.calls == 2);
  CHECK(inlined.inlined_functions.functions == std::vector<std::string>{"Dense"});
  CHECK(inlined.inlined_functions.kept.empty());
  CHECK(OperatorNames(inlined.graph) == OperatorNames(plain.graph));
  CHECK(OutputDifference(plain.graph, inlined.graph) == 0);  // each call's slope, weights and biases

  absl::StatusOr<onnx::ModelProto> written = ExportOnnx(inlined);
  REQUIRE(written.ok());
  CHECK(written->functions_size() == 0);
  for (const auto& import : written->opset_import()) CHECK(import.domain() != kDomain);
}

TEST_CASE("A function the model does not call is written as it was, its domain imported") {
  onnx::ModelProto m = TwoDenseLayers(true);
  AddBodyNode(AddFunction(m, "Unused", {"X"}, {"Y"}), "Relu", {"X"}, {"Y"});
  const OnnxModel model = Imported(m);
  CHECK(model.inlined_functions.functions == std::vector<std::string>{"Dense"});
  absl::StatusOr<onnx::ModelProto> written = ExportOnnx(model);
  REQUIRE(written.ok());
  REQUIRE(written->functions_size() == 1);
  CHECK(written->functions(0).SerializeAsString() == m.functions(1).SerializeAsString());
  CHECK(std::any_of(written->opset_import().begin(), written->opset_import().end(),
                    [](const onnx::OperatorSetIdProto& o) { return o.domain() == kDomain; }));
}

TEST_CASE("Nested calls, names the graph also has and outputs a call leaves out are inlined") {
  onnx::ModelProto m = TwoDenseLayers(true);
  // "Pair": a Dense layer (nested call, its slope the Pair's) and the Dense output's
  // sigmoid as a second output, which the call leaves out; its value "t" is also a
  // name of the graph.
  auto* pair = AddFunction(m, "Pair", {"X", "W", "B"}, {"Y", "Z"});
  pair->add_attribute("slope");
  SetRefAttr(AddBodyNode(pair, "Dense", {"X", "W", "B"}, {"t"}, kDomain), "slope", "slope");
  AddBodyNode(pair, "Relu", {"t"}, {"Y"});
  AddBodyNode(pair, "Sigmoid", {"t"}, {"Z"});
  auto* call = m.mutable_graph()->mutable_node(1);  // dense2 -> y becomes Pair -> t, ""; Relu(t) -> y
  call->set_op_type("Pair");
  call->set_output(0, "t");
  call->add_output("");
  AddNode(m, "Relu", {"t"}, {"y"});

  const OnnxModel model = Imported(m);
  CHECK(model.inlined_functions.calls == 2);
  CHECK(model.inlined_functions.functions == std::vector<std::string>{"Dense", "Pair"});
  CHECK(CountOps(model.graph, "HardSigmoid") == 2);
  CHECK(CountOps(model.graph, "Relu") == 2);
  CHECK(CountOps(model.graph, "Sigmoid") == 1);
  for (NodeId n = 0; n < model.graph.num_nodes(); ++n) CHECK_FALSE(model.graph.node(n).op->is_opaque());
  // Relu(Relu(HardSigmoid(...))): the model written out with one Relu more.
  onnx::ModelProto plain = TwoDenseLayers(false);
  plain.mutable_graph()->mutable_node(5)->set_output(0, "l");
  AddNode(plain, "Relu", {"l"}, {"y"});
  CHECK(OutputDifference(Imported(plain).graph, model.graph) == 0);
  absl::StatusOr<onnx::ModelProto> written = ExportOnnx(model);
  REQUIRE(written.ok());
  CHECK(written->functions_size() == 0);
}

TEST_CASE("A call its function cannot stand in for is kept as it is, saying why") {
  struct Case {
    std::string what, why;
    std::function<void(onnx::ModelProto&, onnx::FunctionProto&)> spoil;
  };
  const std::vector<Case> cases = {
      {"another opset", "imports opset '' version 12, the model version 13",
       [](onnx::ModelProto&, onnx::FunctionProto& f) { f.mutable_opset_import(0)->set_version(12); }},
      {"a name read before it is defined", "reads 'u' before anything defines it",
       [](onnx::ModelProto&, onnx::FunctionProto& f) { f.mutable_node(1)->set_input(0, "u"); }},
      {"an output not computed", "no node of it computes its output 'Y'",
       [](onnx::ModelProto&, onnx::FunctionProto& f) { f.mutable_node(2)->set_output(0, "v"); }},
      {"a name defined twice", "it defines 't' twice",
       [](onnx::ModelProto&, onnx::FunctionProto& f) { f.mutable_node(1)->set_output(0, "t"); }},
      {"a call of itself", "nest more than",
       [](onnx::ModelProto&, onnx::FunctionProto& f) {
         f.mutable_node(0)->set_op_type("Dense");
         f.mutable_node(0)->set_domain(kDomain);
         f.mutable_node(0)->add_input("B");
         SetRefAttr(f.mutable_node(0), "slope", "slope");
       }},
  };
  for (const Case& c : cases) {
    SECTION(c.what) {
      onnx::ModelProto m = TwoDenseLayers(true);
      c.spoil(m, *m.mutable_functions(0));
      onnx::ModelProto as_read = m;
      const InlinedFunctions inlined = InlineLocalFunctions(m);
      CHECK(inlined.calls == 0);
      REQUIRE(inlined.kept.size() == 1);
      CHECK_THAT(inlined.kept[0], Catch::StartsWith("Dense: ") && Catch::Contains(c.why));
      CHECK(m.functions_size() == 1);  // still called
      CHECK(m.SerializeAsString() == as_read.SerializeAsString());
    }
  }
}

TEST_CASE("An attribute a call leaves out takes the function's default, else the operator's") {
  onnx::AttributeProto slope;
  slope.set_name("slope");
  slope.set_type(onnx::AttributeProto::FLOAT);
  slope.set_f(0.35f);
  SECTION("the function's default (IR 9's attribute_proto)") {
    onnx::ModelProto m = TwoDenseLayers(true);
    m.mutable_graph()->mutable_node(1)->clear_attribute();
    m.mutable_functions(0)->clear_attribute();
    SetUnknownField(m.mutable_functions(0), 11, slope.SerializeAsString());
    const OnnxModel model = Imported(m);
    CHECK(model.inlined_functions.calls == 2);
    CHECK(OutputDifference(Imported(TwoDenseLayers(false, 0.35f)).graph, model.graph) == 0);
  }
  SECTION("the operator's default where the function has none") {
    onnx::ModelProto m = TwoDenseLayers(true, 0.7f);
    m.mutable_graph()->mutable_node(1)->clear_attribute();
    const OnnxModel model = Imported(m);
    CHECK(model.inlined_functions.calls == 2);
    CHECK(OutputDifference(Imported(TwoDenseLayers(false, 0.2f)).graph, model.graph) == 0);  // HardSigmoid's 0.2
  }
}

TEST_CASE("A call of an overloaded function gets the overload it names (IR 10)") {
  onnx::ModelProto m = TwoDenseLayers(true);
  // Dense overload "relu": MatMul, Add, Relu; the first call names it.
  auto* relu = AddFunction(m, "Dense", {"X", "W", "B"}, {"Y"});
  SetUnknownField(relu, 13, "relu");
  AddBodyNode(relu, "MatMul", {"X", "W"}, {"t"});
  AddBodyNode(relu, "Add", {"t", "B"}, {"s"});
  AddBodyNode(relu, "Relu", {"s"}, {"Y"});
  SetUnknownField(m.mutable_graph()->mutable_node(0), 8, "relu");
  const OnnxModel model = Imported(m);
  CHECK(model.inlined_functions.calls == 2);
  CHECK(CountOps(model.graph, "Relu") == 1);
  CHECK(CountOps(model.graph, "HardSigmoid") == 1);
}

TEST_CASE("Calls that would grow the graph exponentially are kept") {
  // F0 = Relu; F(k) = F(k-1) twice in a row: F21 would be 2^21 nodes.
  onnx::ModelProto m = NewModel(13);
  AddInput(m, "x", {4});
  AddCall(m, "F21", {"x"}, {"y"}, "call");
  AddOutput(m, "y");
  AddBodyNode(AddFunction(m, "F0", {"X"}, {"Y"}), "Relu", {"X"}, {"Y"});
  for (int k = 1; k <= 21; ++k) {
    auto* f = AddFunction(m, "F" + std::to_string(k), {"X"}, {"Y"});
    AddBodyNode(f, "F" + std::to_string(k - 1), {"X"}, {"h"}, kDomain);
    AddBodyNode(f, "F" + std::to_string(k - 1), {"h"}, {"Y"}, kDomain);
  }
  const InlinedFunctions inlined = InlineLocalFunctions(m);
  CHECK(inlined.calls == 0);
  REQUIRE(inlined.kept.size() == 1);
  CHECK_THAT(inlined.kept[0], Catch::Contains("would add over"));
  CHECK(m.graph().node_size() == 1);
  CHECK(m.functions_size() == 22);
}
