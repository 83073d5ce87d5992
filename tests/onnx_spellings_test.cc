// Spellings ONNX allows that import reads in one form (src/onnx/onnx_spellings.h): the
// default domain as "ai.onnx", sparse initializers.
#include <catch2/catch.hpp>

#include <cstring>

#include "onnx/onnx_spellings.h"
#include "taso/ir/onnx_tensor.h"
#include "taso/ir/ops/names.h"
#include "test_util.h"

using namespace taso;
using namespace taso::testing;

namespace {

// x[2,4] -> MatMul(w[4,4]) -> y, with w a sparse initializer holding `values` at
// `indices` (shape [NNZ] or [NNZ, 2]).
onnx::ModelProto SparseWeightModel(const std::vector<float>& values, const std::vector<int64_t>& indices,
                                   std::vector<int64_t> index_shape) {
  auto m = NewModel();
  AddInput(m, "x", {2, 4});
  AddNode(m, "MatMul", {"x", "w"}, {"y"}, "matmul");
  AddOutput(m, "y");
  onnx::SparseTensorProto* sparse = m.mutable_graph()->add_sparse_initializer();
  sparse->add_dims(4);
  sparse->add_dims(4);
  TensorToProto(*TensorData::Float({static_cast<int64_t>(values.size())}, values), "w", sparse->mutable_values());
  TensorToProto(*TensorData::Int64(Shape(index_shape.begin(), index_shape.end()), indices), "",
                sparse->mutable_indices());
  return m;
}

std::vector<float> ImportedWeight(const onnx::ModelProto& m) {
  absl::StatusOr<OnnxModel> imported = ImportOnnx(m);
  REQUIRE(imported.ok());
  CHECK(imported->sparse_made_dense == std::vector<std::string>{"w"});
  const TensorData* w = imported->graph.ConstantData(imported->graph.FindValue("w"));
  REQUIRE(w != nullptr);
  CHECK(w->shape() == Shape{4, 4});
  return std::vector<float>(w->floats().begin(), w->floats().end());
}

std::string SpellingError(onnx::ModelProto m, int64_t max_bytes = int64_t{1} << 30) {
  absl::StatusOr<std::vector<std::string>> r = CommonSpellings(m, "", max_bytes);
  REQUIRE_FALSE(r.ok());
  return std::string(r.status().message());
}

}  // namespace

TEST_CASE("A sparse initializer is read dense, from linear indices or coordinates") {
  std::vector<float> want(16, 0.0f);
  want[1] = 2.5f;    // [0, 1]
  want[14] = -1.0f;  // [3, 2]
  CHECK(ImportedWeight(SparseWeightModel({2.5f, -1.0f}, {1, 14}, {2})) == want);
  CHECK(ImportedWeight(SparseWeightModel({2.5f, -1.0f}, {0, 1, 3, 2}, {2, 2})) == want);
}

TEST_CASE("A sparse initializer of float16 values keeps their bits") {
  auto m = SparseWeightModel({}, {}, {0});
  onnx::TensorProto* values = m.mutable_graph()->mutable_sparse_initializer(0)->mutable_values();
  values->Clear();
  values->set_name("w");
  values->set_data_type(onnx::TensorProto::FLOAT16);
  values->add_dims(2);
  values->add_int32_data(0x3c00);  // 1.0 in float16, one element per int32 as ONNX stores it
  values->add_int32_data(0xc000);  // -2.0
  TensorToProto(*TensorData::Int64({2}, {3, 12}), "",
                m.mutable_graph()->mutable_sparse_initializer(0)->mutable_indices());
  REQUIRE(CommonSpellings(m, "", int64_t{1} << 30).ok());
  REQUIRE(m.graph().initializer_size() == 1);
  const onnx::TensorProto& dense = m.graph().initializer(0);
  CHECK(dense.data_type() == onnx::TensorProto::FLOAT16);
  REQUIRE(dense.raw_data().size() == 16 * 2);
  uint16_t at3 = 0, at12 = 0, at0 = 1;
  std::memcpy(&at3, dense.raw_data().data() + 3 * 2, 2);
  std::memcpy(&at12, dense.raw_data().data() + 12 * 2, 2);
  std::memcpy(&at0, dense.raw_data().data(), 2);
  CHECK(at3 == 0x3c00);
  CHECK(at12 == 0xc000);
  CHECK(at0 == 0);
}

TEST_CASE("A malformed or oversized sparse initializer is refused, naming it") {
  CHECK_THAT(SpellingError(SparseWeightModel({1.0f}, {16}, {1})), Catch::Contains("'w': index 0 is outside"));
  CHECK_THAT(SpellingError(SparseWeightModel({1.0f}, {0, 4}, {1, 2})), Catch::Contains("'w': index 0 is outside"));
  CHECK_THAT(SpellingError(SparseWeightModel({1.0f}, {1, 2}, {2})), Catch::Contains("indices have shape [2]"));
  CHECK_THAT(SpellingError(SparseWeightModel({1.0f}, {1}, {1}), 32), Catch::Contains("memory limit"));
  auto strings = SparseWeightModel({1.0f}, {1}, {1});
  strings.mutable_graph()->mutable_sparse_initializer(0)->mutable_values()->set_data_type(onnx::TensorProto::STRING);
  CHECK_THAT(SpellingError(strings), Catch::Contains("'w': its element type is not one of fixed size"));
  auto huge = SparseWeightModel({1.0f}, {1}, {1});
  huge.mutable_graph()->mutable_sparse_initializer(0)->set_dims(0, int64_t{1} << 62);
  CHECK_THAT(SpellingError(huge), Catch::Contains("memory limit"));
}

TEST_CASE("Nodes and opset imports of the domain ai.onnx are read as of the default domain") {
  auto m = SmallConvReluModel();
  for (auto& o : *m.mutable_opset_import())
    if (o.domain().empty()) o.set_domain("ai.onnx");
  for (auto& n : *m.mutable_graph()->mutable_node()) n.set_domain("ai.onnx");
  REQUIRE(HasUncommonSpellings(m));
  absl::StatusOr<OnnxModel> imported = ImportOnnx(m);
  REQUIRE(imported.ok());
  CHECK(CountOps(imported->graph, op_names::kConv2D) == 1);  // a library operator, not opaque
  REQUIRE(CommonSpellings(m, "", 1 << 20).ok());
  CHECK_FALSE(HasUncommonSpellings(m));
  REQUIRE(m.opset_import_size() == 1);
  CHECK(m.opset_import(0).domain().empty());
}
