// Shapes a file declares that what their inputs give contradicts
// (src/onnx/onnx_stale_declarations.h): read as ONNX Runtime reads them where ONNX's
// inference tells which are stale, refused where it cannot.
#include <catch2/catch.hpp>

#include "taso/ir/ops/names.h"
#include "test_util.h"

using namespace taso;
using namespace taso::testing;

namespace {

void Declare(onnx::ValueInfoProto* vi, const std::string& name, std::vector<int64_t> shape) {
  vi->set_name(name);
  auto* tensor = vi->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  tensor->clear_shape();
  for (int64_t d : shape) tensor->mutable_shape()->add_dim()->set_dim_value(d);
}

// x[1,3,8,8] -> Conv(w, pads 1) -> c[1,4,8,8] -> Relu -> y, as SmallConvReluModel
// but with names of its own.
onnx::ModelProto ConvRelu() {
  auto m = NewModel();
  AddInput(m, "x", {1, 3, 8, 8});
  AddFloatInit(m, "w", {4, 3, 3, 3});
  SetIntsAttr(AddNode(m, "Conv", {"x", "w"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  AddNode(m, op_names::kRelu, {"c"}, {"y"}, "relu");
  AddOutput(m, "y");
  return m;
}

}  // namespace

TEST_CASE("A stale value_info is left out and named", "[onnx]") {
  auto m = ConvRelu();
  Declare(m.mutable_graph()->add_value_info(), "c", {1, 4, 6, 6});
  absl::StatusOr<OnnxModel> imported = ImportOnnx(m);
  REQUIRE(imported.ok());
  REQUIRE(imported->stale_declarations.size() == 1);
  const StaleDeclaration& stale = imported->stale_declarations[0];
  CHECK(stale.name == "c");
  CHECK(stale.declared == Shape{1, 4, 6, 6});
  CHECK(stale.computed == Shape{1, 4, 8, 8});
  CHECK_FALSE(stale.graph_output);
  CHECK(imported->graph.value(imported->graph.FindValue("c")).shape == Shape{1, 4, 8, 8});
}

TEST_CASE("A stale graph output is written at the shape computed", "[onnx]") {
  auto m = ConvRelu();
  Declare(m.mutable_graph()->mutable_output(0), "y", {4, 4, 8, 8});
  absl::StatusOr<OnnxModel> imported = ImportOnnx(m);
  REQUIRE(imported.ok());
  REQUIRE(imported->stale_declarations.size() == 1);
  CHECK(imported->stale_declarations[0].graph_output);
  absl::StatusOr<onnx::ModelProto> written = ExportOnnx(*imported);
  REQUIRE(written.ok());
  const auto& dims = written->graph().output(0).type().tensor_type().shape().dim();
  REQUIRE(dims.size() == 4);
  CHECK(dims[0].dim_value() == 1);
}

TEST_CASE("A contradiction ONNX's inference cannot settle is refused", "[onnx]") {
  // The convolution reads the output of an operator ONNX does not know, declared
  // [1,3,8,8]: nothing tells whether that or the declaration of c is stale.
  auto m = ConvRelu();
  auto* custom = m.mutable_graph()->mutable_node(0);
  custom->set_input(0, "u");
  auto* unknown = m.mutable_graph()->add_node();
  unknown->set_op_type("Unknown");
  unknown->set_domain("com.example");
  unknown->add_input("x");
  unknown->add_output("u");
  auto* opset = m.add_opset_import();
  opset->set_domain("com.example");
  opset->set_version(1);
  Declare(m.mutable_graph()->add_value_info(), "u", {1, 3, 8, 8});
  Declare(m.mutable_graph()->add_value_info(), "c", {1, 4, 6, 6});
  CHECK_THAT(ImportError(m), Catch::Contains("declares 'c' with shape [1,4,6,6] but its inputs give [1,4,8,8]"));
}

TEST_CASE("Declarations at the size an input had before it was made symbolic are stale at others", "[onnx]") {
  auto m = ConvRelu();
  InputDim(m, 0, 0)->set_dim_param("N");
  Declare(m.mutable_graph()->add_value_info(), "c", {1, 4, 8, 8});
  absl::StatusOr<OnnxModel> at_one = ImportOnnx(m);  // N searched at 1: the declaration holds
  REQUIRE(at_one.ok());
  CHECK(at_one->stale_declarations.empty());
  ImportOptions at_two;
  at_two.input_shapes["x"] = {2, 3, 8, 8};
  absl::StatusOr<OnnxModel> built = ImportOnnx(m, at_two);
  REQUIRE(built.ok());
  REQUIRE(built->stale_declarations.size() == 1);
  CHECK(built->stale_declarations[0].computed == Shape{2, 4, 8, 8});
}
