// BlockDiag: two matrices on the diagonal of one, its shape rule, and its ONNX form where
// it is not folded into a weight.
#include <catch2/catch.hpp>

#include "taso/ir/executor.h"
#include "taso/ir/ops/names.h"
#include "taso/onnx/onnx_io.h"
#include "test_util.h"

namespace taso {
namespace {

using testing::AddOp;

absl::StatusOr<std::vector<OutputType>> Types(std::vector<Shape> shapes) {
  std::vector<InputInfo> in;
  for (Shape& s : shapes) in.push_back(InputInfo{true, DataType::kFloat32, std::move(s)});
  return testing::Op(op_names::kBlockDiag)->InferTypes(Params(), in);
}

// b [2, 3] and d [1, 2] fed at run time, y = BlockDiag(b, d).
Graph BlockDiagOfInputs() {
  Graph g;
  const ValueId b = *g.AddInput("b", DataType::kFloat32, {2, 3});
  const ValueId d = *g.AddInput("d", DataType::kFloat32, {1, 2});
  REQUIRE(g.AddOutput(AddOp(g, op_names::kBlockDiag, {b, d}, "y")).ok());
  return g;
}

TEST_CASE("BlockDiag puts two matrices on a diagonal, zeros elsewhere") {
  auto types = Types({{2, 3}, {1, 2}});
  REQUIRE(types.ok());
  CHECK((*types)[0].shape == Shape{3, 5});
  TensorMap inputs;
  inputs["b"] = Tensor<float>(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  inputs["d"] = Tensor<float>(Shape{1, 2}, {7, 8});
  auto out = RunReference(BlockDiagOfInputs(), inputs);
  REQUIRE(out.ok());
  CHECK(out->at("y").data == std::vector<float>{1, 2, 3, 0, 0,  //
                                                4, 5, 6, 0, 0,  //
                                                0, 0, 0, 7, 8});
}

TEST_CASE("BlockDiag refuses what is not two matrices") {
  auto rank3 = Types({{2, 3, 1}, {1, 2}});
  REQUIRE_FALSE(rank3.ok());
  CHECK_THAT(std::string(rank3.status().message()), Catch::Contains("expects two matrices"));
  CHECK_FALSE(Types({{2, 3}}).ok());
}

TEST_CASE("BlockDiag of tensors computed at run time is written as Pad and Concat") {
  const Graph g = BlockDiagOfInputs();
  for (int opset : {11, 17}) {
    INFO("opset " << opset);
    auto proto = ExportOnnx(NewOnnxModel(g, opset));
    REQUIRE(proto.ok());
    int pads = 0;
    for (const auto& node : proto->graph().node()) pads += node.op_type() == op_names::kPad;
    CHECK(pads == 2);
    auto back = ImportOnnx(*proto);
    INFO(back.status().message());
    REQUIRE(back.ok());
    const TensorMap inputs = RandomInputs(g, 3);
    auto a = RunReference(g, inputs);
    auto b = RunReference(back->graph, inputs);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(MaxAbsDifference(*a, *b) == 0);
  }
}

}  // namespace
}  // namespace taso
