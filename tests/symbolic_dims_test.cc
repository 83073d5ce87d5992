// Symbolic input dimensions through OptimizeModel: which the written model keeps, and why
// the others are written fixed.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "pipeline/speed_at_sizes.h"
#include "rule_lookup.h"
#include "taso/ir/ops/names.h"
#include "taso/pipeline/pipeline.h"
#include "test_util.h"

using namespace taso;

namespace {

PipelineOptions AnalyticOptions() {
  PipelineOptions options;
  options.backend = Backend::kAnalytic;
  options.search = DefaultSearchKind(Backend::kAnalytic);
  options.engine = SearchEngine::kBacktracking;
  options.verify_speed = false;
  options.search_options.budget = 20;
  return options;
}

void MakeBatchSymbolic(onnx::ValueInfoProto& vi) {
  vi.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("batch");
}

// x[batch,4,8,8] -> Conv -> Relu -> y (of undeclared shape): the relu goes into the
// convolution.
onnx::ModelProto SymbolicConvRelu() {
  onnx::ModelProto m = testing::SmallConvReluModel();
  MakeBatchSymbolic(*m.mutable_graph()->mutable_input(0));
  return m;
}

// x[batch,64] times two matrices, added: the search makes them one product, x (w1 + w2).
onnx::ModelProto SymbolicTwoProducts() {
  onnx::ModelProto m = testing::NewModel();
  testing::AddInput(m, "x", {1, 64});
  MakeBatchSymbolic(*m.mutable_graph()->mutable_input(0));
  testing::AddFloatInit(m, "w1", {64, 64}, 0.25f);
  testing::AddFloatInit(m, "w2", {64, 64}, 0.5f);
  testing::AddNode(m, op_names::kMatMul, {"x", "w1"}, {"a"});
  testing::AddNode(m, op_names::kMatMul, {"x", "w2"}, {"b"});
  testing::AddNode(m, op_names::kAdd, {"a", "b"}, {"y"});
  testing::AddOutput(m, "y");
  return m;
}

// A runtime where the input as read takes `input_ms` per row of its batch and a rewritten
// model `rewritten_ms` per row at batch 1; at larger batches, `larger_ms` per row, its
// values in turn, one per comparison (the last repeated). No spread. It notes the batches
// it was asked to time.
class BatchRuntime : public RuntimeTimer {
 public:
  BatchRuntime(std::multiset<std::string> input_ops, double input_ms, double rewritten_ms,
               std::vector<double> larger_ms)
      : input_ops_(std::move(input_ops)),
        input_ms_(input_ms),
        rewritten_ms_(rewritten_ms),
        larger_ms_(std::move(larger_ms)) {}
  std::string name() const override { return "stand-in"; }
  absl::StatusOr<PairTiming> Compare(const OnnxModel& a, const OnnxModel& b) override {
    const bool larger = Batch(b) > 1;
    batches.push_back(Batch(b));
    const PairTiming t{.a_seconds = Seconds(a), .b_seconds = Seconds(b), .pairs = 4, .runs = 40, .spread = 0};
    if (larger && larger_ms_.size() > 1) larger_ms_.erase(larger_ms_.begin());
    return t;
  }
  std::vector<int64_t> batches;

 private:
  static int64_t Batch(const OnnxModel& m) { return m.graph.value(m.graph.inputs()[0]).shape[0]; }
  double Seconds(const OnnxModel& m) const {
    const int64_t batch = Batch(m);
    const double per_row = testing::OperatorNames(m.graph) == input_ops_ ? input_ms_
                           : batch == 1                                  ? rewritten_ms_
                                                                         : larger_ms_.front();
    return per_row * batch * 1e-3;
  }
  std::multiset<std::string> input_ops_;
  double input_ms_, rewritten_ms_;
  std::vector<double> larger_ms_;
};

PipelineOptions TimedOptions(RuntimeTimer& timer) {
  PipelineOptions options = AnalyticOptions();
  options.verify_speed = true;
  options.timer = &timer;
  return options;
}

// x[batch,4,h,w] -> Conv 3x3 without padding -> Relu -> y: no output at h or w 1 or 2.
onnx::ModelProto SymbolicImageConv() {
  onnx::ModelProto m = testing::SmallConvReluModel();
  auto* attributes = m.mutable_graph()->mutable_node(0)->mutable_attribute();
  for (int i = attributes->size() - 1; i >= 0; --i)
    if (attributes->Get(i).name() == "pads") attributes->DeleteSubrange(i, 1);
  auto* shape = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->mutable_dim(0)->set_dim_param("batch");
  shape->mutable_dim(2)->set_dim_param("h");
  shape->mutable_dim(3)->set_dim_param("w");
  return m;
}

std::string FirstDim(const onnx::ValueInfoProto& vi) {
  const auto& d = vi.type().tensor_type().shape().dim(0);
  return d.has_dim_value() ? std::to_string(d.dim_value()) : d.dim_param();
}

// The model optimized, its one symbolic dimension kept and checked at 2 and 3.
PipelineResult OptimizedKeepingItsDimension(const OnnxModel& model) {
  auto result = OptimizeModel(model, testing::ShippedRules().rules, AnalyticOptions());
  REQUIRE(result.ok());
  REQUIRE(result->symbolic_dims.size() == 1);
  INFO(SummaryText(AnalyticOptions(), *result, "m"));
  CHECK(result->symbolic_dims[0].kept);
  CHECK(result->symbolic_dims[0].checked_at == std::vector<int64_t>{2, 3});
  return *std::move(result);
}

}  // namespace

TEST_CASE("A symbolic batch the rewrites hold for is kept, checked at two other sizes", "[symbolic]") {
  const OnnxModel model = testing::ImportFolded(SymbolicTwoProducts());
  auto result = OptimizeModel(model, testing::ShippedRules().rules, AnalyticOptions());
  REQUIRE(result.ok());
  REQUIRE(result->symbolic_dims.size() == 1);
  const auto& dim = result->symbolic_dims[0];
  CHECK(dim.name == "batch");
  CHECK(dim.built_at == 1);
  CHECK(dim.kept);
  CHECK(dim.checked_at == std::vector<int64_t>{2, 3});
  CHECK(result->symbolic_check_difference.has_value());
  CHECK(result->model.graph.num_nodes() < model.graph.num_nodes());  // something was rewritten

  auto exported = ExportOnnx(result->model);
  REQUIRE(exported.ok());
  CHECK(FirstDim(exported->graph().input(0)) == "batch");
  CHECK(FirstDim(exported->graph().output(0)) == "batch");
  CHECK_THAT(SummaryText(AnalyticOptions(), *result, "m"),
             Catch::Contains("symbolic dimension 'batch': searched at 1 (no --input-shape given") &&
                 Catch::Contains("kept symbolic (self-check passed at 2 and 3 too, inputs in [-1, 1])"));
}

// As older PyTorch exports write every model (keep_initializers_as_inputs): the weights,
// of fixed shape, take no size at the other sizes checked.
TEST_CASE("A symbolic batch is kept where the weights are listed as inputs too", "[symbolic]") {
  onnx::ModelProto m = SymbolicTwoProducts();
  for (const char* weight : {"w1", "w2"}) testing::AddInput(m, weight, {64, 64});
  const PipelineResult result = OptimizedKeepingItsDimension(testing::ImportFolded(m));
  auto exported = ExportOnnx(result.model);
  REQUIRE(exported.ok());
  CHECK(FirstDim(exported->graph().input(0)) == "batch");
  CHECK(exported->graph().input_size() == 3);  // the weights still inputs
}

// A file that declares no shape for its input, given one by --input-shape: its batch is
// kept symbolic (unnamed), the width the weights fix written at the size given.
TEST_CASE("An input of no declared shape is written with the rank given, its batch kept", "[symbolic]") {
  onnx::ModelProto m = SymbolicTwoProducts();
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  ImportOptions options;
  options.fold_shape_arithmetic = true;
  options.input_shapes["x"] = {5, 64};
  auto model = ImportOnnx(m, options);
  REQUIRE(model.ok());
  CHECK(model->shapeless_inputs == std::vector<std::string>{"x"});
  CHECK(model->graph.value(model->graph.inputs()[0]).shape == Shape{5, 64});

  auto result = OptimizeModel(*model, testing::ShippedRules().rules, AnalyticOptions());
  REQUIRE(result.ok());
  REQUIRE(result->symbolic_dims.size() == 2);
  CHECK(result->symbolic_dims[0].name == "x[0]");
  CHECK(result->symbolic_dims[0].kept);
  CHECK(result->symbolic_dims[1].name == "x[1]");
  CHECK_FALSE(result->symbolic_dims[1].kept);  // the products' inner dimension
  auto exported = ExportOnnx(result->model);
  REQUIRE(exported.ok());
  const auto& written = exported->graph().input(0).type().tensor_type().shape();
  REQUIRE(written.dim_size() == 2);
  CHECK_FALSE(written.dim(0).has_dim_value());
  CHECK(written.dim(1).dim_value() == 64);
}

// x [1, seq, 4] plus position embeddings, as BERT exports add them: rows 0 .. seq-1 of a
// table, the seq read from x's shape (ONNX's inference cannot tell the rows' count). The
// file declares the rows' types with seq named, as taso-opt writes them, or with no
// shape, as ONNX's shape inference writes what it cannot tell.
onnx::ModelProto PositionsAddedWithDeclaredTypes(bool shapeless) {
  auto m = testing::NewModel(13);
  testing::AddInput(m, "x", {1, 1, 4});
  testing::InputDim(m, 0, 1)->set_dim_param("seq");
  testing::AddInt64Init(m, "positions", {0, 1, 2, 3, 4, 5, 6, 7});
  testing::AddFloatInit(m, "table", {8, 4}, 0.5f);
  testing::AddInt64Init(m, "at1", {1});
  testing::AddInt64Init(m, "zero", {0});
  testing::AddNode(m, "Shape", {"x"}, {"x_shape"});
  testing::SetIntAttr(testing::AddNode(m, "Gather", {"x_shape", "at1"}, {"seq_size"}), "axis", 0);
  testing::AddNode(m, op_names::kSlice, {"positions", "zero", "seq_size", "zero"}, {"ids"});
  testing::AddNode(m, "Gather", {"table", "ids"}, {"rows"});
  testing::AddNode(m, op_names::kAdd, {"x", "rows"}, {"sum"});
  testing::AddNode(m, op_names::kRelu, {"sum"}, {"y"});
  testing::AddOutput(m, "y");
  for (const auto& [name, dims] : std::vector<std::pair<std::string, int>>{{"ids", 1}, {"rows", 2}}) {
    onnx::ValueInfoProto* vi = m.mutable_graph()->add_value_info();
    vi->set_name(name);
    auto* type = vi->mutable_type()->mutable_tensor_type();
    type->set_elem_type(name == "ids" ? onnx::TensorProto::INT64 : onnx::TensorProto::FLOAT);
    if (shapeless) continue;
    type->mutable_shape()->add_dim()->set_dim_param("seq");
    if (dims == 2) type->mutable_shape()->add_dim()->set_dim_value(4);
  }
  return m;
}

TEST_CASE("Declared types that name a symbolic dimension, or of no shape, are read at the sizes built", "[symbolic]") {
  const bool shapeless = GENERATE(false, true);
  INFO("declared with no shape: " << shapeless);
  const OnnxModel model = testing::ImportFolded(PositionsAddedWithDeclaredTypes(shapeless));
  CHECK(testing::CountOps(model.graph, op_names::kAdd) == 1);  // the library's: its inputs' shapes known
  OptimizedKeepingItsDimension(model);
}

TEST_CASE("A model with nothing to optimize keeps its symbolic batch, decided as any model's", "[symbolic]") {
  // x[batch,3] (float16) -> Relu -> y: no node the library computes.
  onnx::ModelProto m = testing::NewModel(14);
  testing::AddInput(m, "x", {1, 3}, onnx::TensorProto::FLOAT16);
  MakeBatchSymbolic(*m.mutable_graph()->mutable_input(0));
  testing::AddNode(m, op_names::kRelu, {"x"}, {"y"}, "relu");
  testing::AddOutput(m, "y");
  m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT16);
  const OnnxModel model = testing::ImportFolded(m);
  auto result = OptimizeModel(model, testing::ShippedRules().rules, AnalyticOptions());
  REQUIRE(result.ok());
  REQUIRE(result->nothing_to_optimize);
  REQUIRE(result->symbolic_dims.size() == 1);
  CHECK(result->symbolic_dims[0].kept);
  auto exported = ExportOnnx(result->model);
  REQUIRE(exported.ok());
  CHECK(FirstDim(exported->graph().input(0)) == "batch");
  CHECK_THAT(SummaryText(AnalyticOptions(), *result, "m"),
             Catch::Contains("\nsymbolic dimension 'batch': built at 1 (no --input-shape given: symbolic "
                             "dimensions take 1); kept symbolic (the model is written as read)\n"));
}

// The model read from its file is the source the symbolic check builds again at other
// sizes; those imports keep no source of their own (each would copy every weight).
TEST_CASE("A symbolic model read from its file keeps the model read as its source, once", "[symbolic]") {
  const onnx::ModelProto proto = SymbolicTwoProducts();
  const std::string path = (testing::TempDir("source_kept") / "m.onnx").string();
  testing::WriteFile(path, proto.SerializeAsString());
  ImportOptions folding;
  folding.fold_shape_arithmetic = true;
  absl::StatusOr<OnnxModel> read = ImportOnnxFile(path, folding);
  REQUIRE(read.ok());
  REQUIRE(read->source != nullptr);
  CHECK(read->source->SerializeAsString() == proto.SerializeAsString());
  folding.keep_source = false;
  absl::StatusOr<OnnxModel> again = ImportOnnx(proto, folding);
  REQUIRE(again.ok());
  CHECK(again->source == nullptr);
  CHECK(again->symbolic_dims.size() == 1);

  auto result = OptimizeModel(*read, testing::ShippedRules().rules, AnalyticOptions());
  REQUIRE(result.ok());
  REQUIRE(result->symbolic_dims.size() == 1);
  CHECK(result->symbolic_dims[0].kept);
  CHECK(result->symbolic_dims[0].checked_at == std::vector<int64_t>{2, 3});
}

TEST_CASE("A symbolic batch given by --input-shape is searched at that size", "[symbolic]") {
  ImportOptions options;
  options.input_shapes["x"] = {3, 4, 8, 8};
  auto model = ImportOnnx(SymbolicConvRelu(), options);
  REQUIRE(model.ok());
  auto result = OptimizeModel(*model, testing::ShippedRules().rules, AnalyticOptions());
  REQUIRE(result.ok());
  REQUIRE(result->symbolic_dims.size() == 1);
  CHECK(result->symbolic_dims[0].given);
  CHECK(result->symbolic_dims[0].checked_at == std::vector<int64_t>{4, 5});
}

TEST_CASE("A symbolic batch that a fixed Reshape target pins is written fixed, saying why", "[symbolic]") {
  // x[batch,12] -> Reshape([1,3,4]) -> Relu -> y: holds only at batch 1.
  auto m = testing::NewModel(13);
  testing::AddInput(m, "x", {1, 12});
  MakeBatchSymbolic(*m.mutable_graph()->mutable_input(0));
  testing::AddInt64Init(m, "target", {1, 3, 4});
  testing::AddNode(m, op_names::kReshape, {"x", "target"}, {"r"}, "reshape");
  testing::AddNode(m, op_names::kRelu, {"r"}, {"y"}, "relu");
  testing::AddOutput(m, "y");
  auto result = OptimizeModel(testing::ImportFolded(m), testing::ShippedRules().rules, AnalyticOptions());
  REQUIRE(result.ok());
  REQUIRE(result->symbolic_dims.size() == 1);
  CHECK_FALSE(result->symbolic_dims[0].kept);
  CHECK_THAT(result->symbolic_dims[0].why_fixed, Catch::Contains("reshape"));
  auto exported = ExportOnnx(result->model);
  REQUIRE(exported.ok());
  CHECK(FirstDim(exported->graph().input(0)) == "1");
  CHECK_THAT(SummaryText(AnalyticOptions(), *result, "m"), Catch::Contains("written fixed at 1: "));
}

// x[batch,8,12] viewed as [batch, 8, 3, 12 / 3] with the target computed from Shape(x), as
// PyTorch writes `x.view(b, t, h, d // h)`, then two products by matrices, added. ONNX's
// inference (1.12) propagates no Div, so it cannot tell the view's shape.
onnx::ModelProto SymbolicComputedView() {
  auto m = testing::NewModel(13);
  testing::AddInput(m, "x", {1, 8, 12});
  MakeBatchSymbolic(*m.mutable_graph()->mutable_input(0));
  testing::AddInt64Init(m, "at0", {0});
  testing::AddInt64Init(m, "at2", {2});
  testing::AddInt64Init(m, "heads", {3});
  testing::AddInt64Init(m, "tokens_heads", {8, 3});
  testing::AddFloatInit(m, "w1", {4, 4}, 0.25f);
  testing::AddFloatInit(m, "w2", {4, 4}, 0.5f);
  testing::AddNode(m, "Shape", {"x"}, {"shape"});
  testing::SetIntAttr(testing::AddNode(m, "Gather", {"shape", "at0"}, {"b"}), "axis", 0);
  testing::SetIntAttr(testing::AddNode(m, "Gather", {"shape", "at2"}, {"d"}), "axis", 0);
  testing::AddNode(m, op_names::kDiv, {"d", "heads"}, {"head_size"});
  testing::SetIntAttr(testing::AddNode(m, op_names::kConcat, {"b", "tokens_heads", "head_size"}, {"target"}), "axis",
                      0);
  testing::AddNode(m, op_names::kReshape, {"x", "target"}, {"view"});
  testing::AddNode(m, op_names::kMatMul, {"view", "w1"}, {"p1"});
  testing::AddNode(m, op_names::kMatMul, {"view", "w2"}, {"p2"});
  testing::AddNode(m, op_names::kAdd, {"p1", "p2"}, {"y"});
  testing::AddOutput(m, "y");
  return m;
}

TEST_CASE("A view whose target is computed from a symbolic batch leaves what follows to the library", "[symbolic]") {
  const OnnxModel model = testing::ImportFolded(SymbolicComputedView());
  CHECK(testing::CountOps(model.graph, op_names::kMatMul) == 2);  // not opaque: the view's shape is known
  const ValueId view = model.graph.FindValue("view");
  REQUIRE(view != kNoValue);
  CHECK(model.graph.value(view).shape == Shape{1, 8, 3, 4});
  CHECK(model.graph.node(model.graph.value(view).producer).op->is_opaque());  // the view stays as read

  auto result = OptimizeModel(model, testing::ShippedRules().rules, AnalyticOptions());
  REQUIRE(result.ok());
  CHECK(testing::CountOps(result->model.graph, op_names::kMatMul) == 1);  // x (w1 + w2)
  REQUIRE(result->symbolic_dims.size() == 1);
  CHECK(result->symbolic_dims[0].kept);
  CHECK(result->symbolic_dims[0].checked_at == std::vector<int64_t>{2, 3});
}

TEST_CASE("A model whose view follows a symbolic batch is timed on the cpu target", "[symbolic]") {
  const OnnxModel model = testing::ImportFolded(SymbolicComputedView());
  PipelineOptions options = AnalyticOptions();
  options.target = Target::kCpu;
  options.verify_speed = true;
  options.verify_speed_seconds = 2;
  auto result = OptimizeModel(model, testing::ShippedRules().rules, options);
  REQUIRE(result.ok());
  CHECK(result->speed_not_verified.empty());
  REQUIRE(result->speed_check.has_value());
  CHECK(result->speed_check->runtime == "taso's cpu executor");
}

// A token [1,1,4] expanded to x's batch as PyTorch writes `token.expand(n, -1, -1)` (the
// target [n, -1, -1] flattened, compared with -1, ones put there by Where), then viewed
// as [-1, 4 / 1] with the 4 read from the expanded tensor's shape and divided, then two
// products by matrices, added. ONNX's inference (1.12) propagates neither Equal nor
// Where nor Div: the view is typed only once the expansion is.
onnx::ModelProto SymbolicExpandedToken() {
  auto m = testing::NewModel(13);
  testing::AddInput(m, "x", {1, 4});
  MakeBatchSymbolic(*m.mutable_graph()->mutable_input(0));
  testing::AddFloatInit(m, "token", {1, 1, 4}, 0.75f);
  testing::AddInt64Init(m, "at0", {0});
  testing::AddInt64Init(m, "at2", {2});
  testing::AddInt64Init(m, "minus_ones", {-1, -1});
  testing::AddInt64Init(m, "flat", {-1});
  testing::AddInt64Init(m, "minus_one", {-1});
  testing::AddInt64Init(m, "one", {1});
  testing::AddFloatInit(m, "w1", {4, 4}, 0.25f);
  testing::AddFloatInit(m, "w2", {4, 4}, 0.5f);
  testing::AddNode(m, "Shape", {"x"}, {"x_shape"});
  testing::SetIntAttr(testing::AddNode(m, "Gather", {"x_shape", "at0"}, {"n"}), "axis", 0);
  testing::SetIntAttr(testing::AddNode(m, op_names::kConcat, {"n", "minus_ones"}, {"target"}), "axis", 0);
  testing::AddNode(m, op_names::kReshape, {"target", "flat"}, {"target_flat"});
  testing::AddNode(m, "Shape", {"target_flat"}, {"target_size"});
  onnx::NodeProto* ones = testing::AddNode(m, "ConstantOfShape", {"target_size"}, {"ones"});
  auto* value = ones->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_int64_data(1);
  testing::AddNode(m, op_names::kMul, {"ones", "minus_one"}, {"minus"});
  testing::AddNode(m, "Equal", {"target_flat", "minus"}, {"is_minus"});
  testing::AddNode(m, "Where", {"is_minus", "ones", "target_flat"}, {"expand_to"});
  testing::AddNode(m, "Expand", {"token", "expand_to"}, {"tokens"});
  testing::AddNode(m, "Shape", {"tokens"}, {"tokens_shape"});
  testing::SetIntAttr(testing::AddNode(m, "Gather", {"tokens_shape", "at2"}, {"width"}), "axis", 0);
  testing::AddNode(m, op_names::kDiv, {"width", "one"}, {"width_again"});
  testing::SetIntAttr(testing::AddNode(m, op_names::kConcat, {"flat", "width_again"}, {"rows_target"}), "axis", 0);
  testing::AddNode(m, op_names::kReshape, {"tokens", "rows_target"}, {"rows"});
  testing::AddNode(m, op_names::kMatMul, {"rows", "w1"}, {"p1"});
  testing::AddNode(m, op_names::kMatMul, {"rows", "w2"}, {"p2"});
  testing::AddNode(m, op_names::kAdd, {"p1", "p2"}, {"y"});
  testing::AddOutput(m, "y");
  return m;
}

TEST_CASE("A token expanded to a symbolic batch as PyTorch writes it is typed, and what follows", "[symbolic]") {
  const OnnxModel model = testing::ImportFolded(SymbolicExpandedToken());
  const ValueId tokens = model.graph.FindValue("tokens"), rows = model.graph.FindValue("rows");
  REQUIRE(tokens != kNoValue);
  REQUIRE(rows != kNoValue);
  CHECK(model.graph.node(model.graph.value(tokens).producer).op->is_opaque());  // Expand stays as read
  CHECK(model.graph.value(tokens).shape == Shape{1, 1, 4});
  CHECK(model.graph.value(rows).shape == Shape{1, 4});
  CHECK(testing::CountOps(model.graph, op_names::kMatMul) == 2);

  auto result = OptimizeModel(model, testing::ShippedRules().rules, AnalyticOptions());
  REQUIRE(result.ok());
  CHECK(testing::CountOps(result->model.graph, op_names::kMatMul) == 1);
  REQUIRE(result->symbolic_dims.size() == 1);
  CHECK(result->symbolic_dims[0].kept);
}

// A decoder's step as exporters write it: the cached rows past[past,8] and the new ones
// x[seq,8] concatenated, the attention mask m[total,1] added (total = past + seq tokens),
// then two products by matrices, added (the search makes them one). `reshaped`: the rows
// reshaped to a target computed from their shape first (as PyTorch splits heads), which
// the symbolic import leaves opaque and types from the model built as static.
onnx::ModelProto CachedRowsWithMask(bool reshaped = false) {
  onnx::ModelProto m = testing::NewModel(13);
  testing::AddInput(m, "past", {1, 8});
  testing::AddInput(m, "x", {1, 8});
  testing::AddInput(m, "mask", {1, 1});
  testing::InputDim(m, 0, 0)->set_dim_param("past");
  testing::InputDim(m, 1, 0)->set_dim_param("seq");
  testing::InputDim(m, 2, 0)->set_dim_param("total");
  testing::SetIntAttr(testing::AddNode(m, op_names::kConcat, {"past", "x"}, {"rows"}), "axis", 0);
  std::string rows = "rows";
  if (reshaped) {
    testing::AddNode(m, "Shape", {"rows"}, {"rows_shape"});
    testing::AddNode(m, op_names::kReshape, {"rows", "rows_shape"}, {"rows_again"});
    rows = "rows_again";
  }
  testing::AddNode(m, op_names::kAdd, {rows, "mask"}, {"masked"});
  testing::AddFloatInit(m, "w1", {8, 8}, 0.25f);
  testing::AddFloatInit(m, "w2", {8, 8}, 0.5f);
  testing::AddNode(m, op_names::kMatMul, {"masked", "w1"}, {"p1"});
  testing::AddNode(m, op_names::kMatMul, {"masked", "w2"}, {"p2"});
  testing::AddNode(m, op_names::kAdd, {"p1", "p2"}, {"y"});
  testing::AddOutput(m, "y");
  return m;
}

TEST_CASE("A dimension the model builds at only as a sum of two others is kept as that sum", "[symbolic]") {
  // Built at 1 each, the mask broadcasts; apart from past + seq it does not. Reshaped by a
  // computed target, the model at sizes apart imports with the Add opaque (its input of
  // unknown shape), but does not compute there all the same.
  const bool reshaped = GENERATE(false, true);
  INFO("reshaped: " << reshaped);
  auto result = OptimizeModel(testing::ImportFolded(CachedRowsWithMask(reshaped)), testing::ShippedRules().rules,
                              AnalyticOptions());
  REQUIRE(result.ok());
  CHECK(testing::CountOps(result->model.graph, op_names::kMatMul) == 1);
  REQUIRE(result->symbolic_dims.size() == 3);
  const auto& total = result->symbolic_dims[2];
  REQUIRE(total.name == "total");
  INFO(total.why_fixed);
  CHECK(total.kept);
  CHECK(total.sum_of == std::vector<std::string>{"past", "seq"});
  CHECK(total.checked_at == std::vector<int64_t>{2 + 3, 3 + 5});  // past's sizes plus seq's
  CHECK_THAT(SummaryText(AnalyticOptions(), *result, "m"), Catch::Contains("kept symbolic, as past + seq"));
  auto exported = ExportOnnx(result->model);
  REQUIRE(exported.ok());
  CHECK(FirstDim(exported->graph().input(2)) == "total");
  CHECK(FirstDim(exported->graph().output(0)) == "total");  // past + seq rows
}

TEST_CASE("A dimension one more than another is kept as that sum; one twice another is fixed", "[symbolic]") {
  // One new row, not a symbolic seq: total = past + 1, as an export for one new token has.
  onnx::ModelProto m = CachedRowsWithMask();
  testing::InputDim(m, 1, 0)->set_dim_value(1);
  auto result = OptimizeModel(testing::ImportFolded(m), testing::ShippedRules().rules, AnalyticOptions());
  REQUIRE(result.ok());
  REQUIRE(result->symbolic_dims.size() == 2);
  CHECK(result->symbolic_dims[0].kept);  // past
  const auto& total = result->symbolic_dims[1];
  REQUIRE(total.name == "total");
  CHECK(total.kept);
  CHECK(total.sum_of == std::vector<std::string>{"past"});
  CHECK(total.sum_plus == 1);
  CHECK_THAT(SummaryText(AnalyticOptions(), *result, "m"), Catch::Contains("kept symbolic, as past + 1"));

  // The cached rows twice, no new ones: total = 2 past, which no candidate gives.
  m.mutable_graph()->mutable_node(0)->set_input(1, "past");
  result = OptimizeModel(testing::ImportFolded(m), testing::ShippedRules().rules, AnalyticOptions());
  REQUIRE(result.ok());
  REQUIRE(result->symbolic_dims.size() == 2);
  const auto& twice = result->symbolic_dims[1];
  REQUIRE(twice.name == "total");
  CHECK_FALSE(twice.kept);
  CHECK(twice.sum_of.empty());
  CHECK_THAT(twice.why_fixed, Catch::Contains("broadcast"));
}

TEST_CASE("Without the self-check symbolic dimensions are written fixed", "[symbolic]") {
  PipelineOptions options = AnalyticOptions();
  options.self_check = false;
  auto result = OptimizeModel(testing::ImportFolded(SymbolicConvRelu()), testing::ShippedRules().rules, options);
  REQUIRE(result.ok());
  REQUIRE(result->symbolic_dims.size() == 1);
  CHECK_FALSE(result->symbolic_dims[0].kept);
  CHECK_THAT(result->symbolic_dims[0].why_fixed, Catch::Contains("self-check is off"));
  auto exported = ExportOnnx(result->model);
  REQUIRE(exported.ok());
  CHECK(FirstDim(exported->graph().input(0)) == "1");
}

TEST_CASE("Image sizes a model cannot be built at as 1 are taken at the smallest power of two it builds at",
          "[symbolic]") {
  const OnnxModel model = testing::ImportFolded(SymbolicImageConv());
  std::map<std::string, int64_t> sizes;
  for (const SymbolicDim& d : model.symbolic_dims) {
    sizes[d.Key()] = d.value;
    CHECK_FALSE(d.given);
    if (d.Key() != "batch") CHECK_THAT(d.why_not_one, Catch::Contains("larger than the padded input"));
  }
  // The batch builds at 1 with the others at 4, so it is put back there.
  CHECK(sizes == std::map<std::string, int64_t>{{"batch", 1}, {"h", 4}, {"w", 4}});
  CHECK(model.graph.value(model.graph.inputs()[0]).shape == Shape{1, 4, 4, 4});

  auto result = OptimizeModel(model, testing::ShippedRules().rules, AnalyticOptions());
  REQUIRE(result.ok());
  REQUIRE(result->symbolic_dims.size() == 3);
  for (const auto& dim : result->symbolic_dims) CHECK(dim.kept);
  // Multiples of 4 for h and w (the 2nd and 3rd variables), as a model dividing an image
  // by its size needs; 2 and 3 for the batch.
  CHECK(result->symbolic_dims[0].checked_at == std::vector<int64_t>{2, 3});
  CHECK(result->symbolic_dims[1].checked_at == std::vector<int64_t>{12, 20});
  CHECK(result->symbolic_dims[2].checked_at == std::vector<int64_t>{16, 28});
  CHECK_THAT(SummaryText(AnalyticOptions(), *result, "m"),
             Catch::Contains("symbolic dimension 'h': searched at 4 (no --input-shape given; the smallest power of two "
                             "the model builds at, as at 1: node 'conv' (Conv): kernel"));
}

TEST_CASE("Sizes a runtime refuses for opaque nodes are grown past too: a 1-D convolution, a reflecting pad",
          "[symbolic]") {
  // wav[1,t] -> Unsqueeze -> Conv1d (kernel 10, stride 5) -> Pad reflect 2 -> y: ONNX
  // infers sizes at t = 1 for both; 32 is the first power of two they run at (t = 16
  // gives the Pad an axis of 2).
  auto m = testing::NewModel(13);
  testing::AddInput(m, "wav", {1, 16000});
  testing::InputDim(m, 0, 1)->set_dim_param("t");
  testing::AddInt64Init(m, "axes", {1});
  testing::AddNode(m, "Unsqueeze", {"wav", "axes"}, {"x"}, "unsqueeze");
  testing::AddFloatInit(m, "w", {4, 1, 10});
  testing::SetIntsAttr(testing::AddNode(m, "Conv", {"x", "w"}, {"c"}, "conv1d"), "strides", {5});
  testing::AddInt64Init(m, "pads", {0, 0, 2, 0, 0, 2});
  testing::SetStringAttr(testing::AddNode(m, "Pad", {"c", "pads"}, {"y"}, "mirror"), "mode", "reflect");
  testing::AddOutput(m, "y");
  const OnnxModel model = testing::ImportFolded(m);
  REQUIRE(model.symbolic_dims.size() == 1);
  CHECK(model.symbolic_dims[0].value == 32);
  CHECK_THAT(model.symbolic_dims[0].why_not_one,
             Catch::Contains("node 'conv1d' (Conv): window [10] is larger than the padded input [1,1,1]"));
  CHECK(model.graph.value(model.graph.FindValue("y")).shape == Shape{1, 4, 9});  // 5 samples, padded
}

TEST_CASE("A model that builds at no size of its symbolic dimensions fails saying what was tried", "[symbolic]") {
  // x[1,n] -> Reshape([5,7]): 35 elements, which no power of two gives.
  auto m = testing::NewModel(13);
  testing::AddInput(m, "x", {1, 8});
  m.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_param("n");
  testing::AddInt64Init(m, "target", {5, 7});
  testing::AddNode(m, op_names::kReshape, {"x", "target"}, {"y"}, "reshape");
  testing::AddOutput(m, "y");
  ImportOptions folding;
  folding.fold_shape_arithmetic = true;
  const absl::StatusOr<OnnxModel> model = ImportOnnx(m, folding);
  REQUIRE_FALSE(model.ok());
  CHECK(model.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(
      std::string(model.status().message()),
      Catch::Contains("reshape") && Catch::Contains("with the symbolic dimensions n at 1, nor at any power of two "
                                                    "up to 1024; give their sizes with --input-shape"));
}

TEST_CASE("A rewrite faster at the batch searched but slower at a larger one is not written", "[symbolic]") {
  const OnnxModel model = testing::ImportFolded(SymbolicTwoProducts());
  BatchRuntime runtime(testing::OperatorNames(model.graph), 1.0, 0.5, {1.5});
  auto result = OptimizeModel(model, testing::ShippedRules().rules, TimedOptions(runtime));
  REQUIRE(result.ok());
  REQUIRE(result->larger_sizes.has_value());
  // The input's 1 ms at batch 1 is predicted within the 20 ms budget up to the largest
  // growth, 256 (a 64x64 product's work is little); slower there, it is timed again before
  // the input is written.
  CHECK(result->larger_sizes->sizes == "batch=256");
  CHECK(std::count(runtime.batches.begin(), runtime.batches.end(), 256) == 2);
  CHECK(result->larger_sizes->slower);
  CHECK(result->model.graph.num_nodes() == model.graph.num_nodes());  // the input, as read
  CHECK(result->search.rules_applied.empty());
  REQUIRE(result->symbolic_dims.size() == 1);
  CHECK(result->symbolic_dims[0].kept);
  const std::string summary = SummaryText(TimedOptions(runtime), *result, "m");
  CHECK_THAT(summary, Catch::Contains("timed at larger sizes too (batch=256): 256.000 ms -> 384.000 ms (0.667x") &&
                          Catch::Contains("slower there, twice (first 0.667x), so the input is written as read") &&
                          Catch::Contains("none kept: faster at the sizes searched, 0.667x at batch=256"));
}

TEST_CASE("A rewrite faster at the batch searched and not slower at a larger one is written", "[symbolic]") {
  const OnnxModel model = testing::ImportFolded(SymbolicTwoProducts());
  BatchRuntime runtime(testing::OperatorNames(model.graph), 1.0, 0.5, {0.9});
  auto result = OptimizeModel(model, testing::ShippedRules().rules, TimedOptions(runtime));
  REQUIRE(result.ok());
  REQUIRE(result->larger_sizes.has_value());
  CHECK_FALSE(result->larger_sizes->slower);
  CHECK_FALSE(result->larger_sizes->first_ratio.has_value());
  CHECK(result->model.graph.num_nodes() < model.graph.num_nodes());
  CHECK_THAT(SummaryText(TimedOptions(runtime), *result, "m"),
             Catch::Contains("timed at larger sizes too (batch=256)") && Catch::Contains("; not slower there\n"));

  // Slower at the first timing only: taken as noise, the rewritten model is written.
  BatchRuntime flaky(testing::OperatorNames(model.graph), 1.0, 0.5, {1.5, 0.9});
  result = OptimizeModel(model, testing::ShippedRules().rules, TimedOptions(flaky));
  REQUIRE(result.ok());
  REQUIRE(result->larger_sizes.has_value());
  CHECK_FALSE(result->larger_sizes->slower);
  CHECK(result->larger_sizes->first_ratio == Approx(1.0 / 1.5));
  CHECK(result->model.graph.num_nodes() < model.graph.num_nodes());
  CHECK_THAT(SummaryText(TimedOptions(flaky), *result, "m"),
             Catch::Contains("not slower there when timed again (first 0.667x)"));
}

namespace {

// x[rows,1024] times a 1024x1024 weight: the weight's bytes, read once, dominate.
Graph ProductByWeight(int64_t rows) {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {rows, 1024});
  REQUIRE(
      g.AddOutput(testing::AddOp(g, op_names::kMatMul, {x, testing::AddWeight(g, "w", {1024, 1024}, 1)}, "y")).ok());
  return g;
}

// q[n,256] times k[256,n]: attention's scores, whose work grows with n squared.
Graph Scores(int64_t n) {
  Graph g;
  const ValueId q = *g.AddInput("q", DataType::kFloat32, {n, 256});
  const ValueId k = *g.AddInput("k", DataType::kFloat32, {256, n});
  REQUIRE(g.AddOutput(testing::AddOp(g, op_names::kMatMul, {q, k}, "s")).ok());
  return g;
}

}  // namespace

TEST_CASE("A model's time at larger sizes is its time as built and the roofline's price of the work that grows",
          "[symbolic]") {
  // Four times the rows read the same 4 MiB weight: little more to price.
  const double rows = pipeline::PredictedSeconds(1e-3, ProductByWeight(1), ProductByWeight(4));
  CHECK(rows > 1e-3);
  CHECK(rows < 1.01e-3);
  // Four times the tokens: 16 times the scores, 33.5 MFLOP against 2.1 at 1e11 FLOP/s.
  const double scores = pipeline::PredictedSeconds(1e-3, Scores(64), Scores(256));
  CHECK(scores == Approx(1e-3 + (33.5e6 - 2.1e6) / 1e11).epsilon(0.02));
}

TEST_CASE("A dimension kept as a sum is timed at larger sizes as the sum of its terms", "[symbolic]") {
  const OnnxModel model = testing::ImportFolded(CachedRowsWithMask());
  BatchRuntime runtime(testing::OperatorNames(model.graph), 1.0, 0.5, {0.9});
  auto result = OptimizeModel(model, testing::ShippedRules().rules, TimedOptions(runtime));
  REQUIRE(result.ok());
  REQUIRE(result->larger_sizes.has_value());
  // past and seq grow by 256 (1 ms and little work that grows); total with them.
  CHECK(result->larger_sizes->sizes == "past=256, seq=256, total=512");
  CHECK(result->larger_sizes->not_timed.empty());
  CHECK(std::count(runtime.batches.begin(), runtime.batches.end(), 256) == 1);
}

TEST_CASE("Sizes given by --input-shape, or an input too slow to time larger, are not timed larger", "[symbolic]") {
  const OnnxModel slow_input = testing::ImportFolded(SymbolicTwoProducts());
  BatchRuntime slow(testing::OperatorNames(slow_input.graph), 25.0, 12.5, {37.5});
  auto result = OptimizeModel(slow_input, testing::ShippedRules().rules, TimedOptions(slow));
  REQUIRE(result.ok());
  REQUIRE(result->larger_sizes.has_value());
  CHECK(result->larger_sizes->sizes == "batch=4");
  CHECK_THAT(result->larger_sizes->not_timed, Catch::Contains("over 20 ms"));
  CHECK(result->model.graph.num_nodes() < slow_input.graph.num_nodes());  // written as the speed check chose

  ImportOptions given;
  given.fold_shape_arithmetic = true;
  given.input_shapes["x"] = {1, 64};
  const absl::StatusOr<OnnxModel> at_one = ImportOnnx(SymbolicTwoProducts(), given);
  REQUIRE(at_one.ok());
  BatchRuntime runtime(testing::OperatorNames(at_one->graph), 1.0, 0.5, {1.5});
  result = OptimizeModel(*at_one, testing::ShippedRules().rules, TimedOptions(runtime));
  REQUIRE(result.ok());
  CHECK_FALSE(result->larger_sizes.has_value());
  CHECK(std::count(runtime.batches.begin(), runtime.batches.end(), 1) == static_cast<long>(runtime.batches.size()));
}
