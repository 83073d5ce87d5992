// A dynamic-axes model's graph made runnable by the executors (RunnableAtItsSizes): its
// shape arithmetic folded at the sizes it is built at, what it computes unchanged.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "taso/backends/cpu_executor.h"
#include "taso/ir/ops/names.h"
#include "taso/onnx/onnx_static_copy.h"
#include "test_util.h"

using namespace taso;

TEST_CASE("A view whose target follows a symbolic batch runs on the cpu executor at the size built") {
  ImportOptions at_two;
  at_two.input_shapes["x"] = {2, 8, 12};
  const absl::StatusOr<OnnxModel> model = ImportOnnx(testing::ComputedViewModel(), at_two);
  REQUIRE(model.ok());
  // As read, the view's target is computed at run time: nodes outside the library.
  CHECK_THAT(FirstOpaqueNode(model->graph), Catch::Contains("(Shape)"));
  CHECK_FALSE(CpuExecutor::Create(model->graph).ok());

  const absl::StatusOr<Graph> runnable = RunnableAtItsSizes(*model);
  INFO(runnable.status());
  REQUIRE(runnable.ok());
  CHECK(FirstOpaqueNode(*runnable).empty());
  CHECK(runnable->value(runnable->inputs()[0]).shape == Shape{2, 8, 12});
  auto executor = CpuExecutor::Create(*runnable);
  REQUIRE(executor.ok());
  const TensorMap inputs = RandomInputs(*runnable, 7);
  const absl::StatusOr<TensorMap> got = (*executor)->Run(inputs);
  REQUIRE(got.ok());
  const Tensor<float>& x = inputs.at("x");
  const Tensor<float>& y = got->at("y");
  REQUIRE(y.shape == Shape{2, 8, 3, 4});
  // y[n, t, h, j] = sum over k of x[n, t, 4h + k] w[k, j], w as AddFloatInit fills it.
  double worst = 0;
  for (int64_t row = 0; row < 2 * 8 * 3; ++row)
    for (int64_t j = 0; j < 4; ++j) {
      double sum = 0;
      for (int64_t k = 0; k < 4; ++k) sum += x.data[row * 4 + k] * (0.25 + 0.01 * ((4 * k + j) % 7));
      worst = std::max(worst, std::fabs(y.data[row * 4 + j] - sum));
    }
  CHECK(worst < 1e-5);
}

TEST_CASE("A model with no node outside the library is run as it is") {
  onnx::ModelProto fixed = testing::ComputedViewModel();
  testing::InputDim(fixed, 0, 0)->set_dim_value(2);  // a static batch: the arithmetic folded at import
  const OnnxModel model = testing::ImportFolded(fixed);
  REQUIRE(FirstOpaqueNode(model.graph).empty());
  const absl::StatusOr<Graph> runnable = RunnableAtItsSizes(model);
  REQUIRE(runnable.ok());
  CHECK(runnable->StructuralHash() == model.graph.StructuralHash());
}

TEST_CASE("A node outside the library that no folding removes is named") {
  onnx::ModelProto m = testing::NewModel();
  testing::AddInput(m, "x", {4});
  testing::AddNode(m, op_names::kRelu, {"x"}, {"r"});
  onnx::NodeProto* custom = testing::AddNode(m, "Mystery", {"r"}, {"y"}, "mystery");
  custom->set_domain("com.example");
  auto* opset = m.add_opset_import();
  opset->set_domain("com.example");
  opset->set_version(1);
  testing::AddOutput(m, "y");
  auto* type = m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  type->mutable_shape()->add_dim()->set_dim_value(4);
  const absl::StatusOr<OnnxModel> model = ImportOnnx(m);
  REQUIRE(model.ok());
  const absl::StatusOr<Graph> runnable = RunnableAtItsSizes(*model);
  REQUIRE_FALSE(runnable.ok());
  CHECK_THAT(std::string(runnable.status().message()),
             Catch::Contains("node 'mystery' (Mystery) is outside the operator library"));
}
