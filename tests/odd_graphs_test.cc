// The optimizer's passes on odd but valid graphs: an opaque node with an omitted output,
// and initializers the user may override (graph inputs with a default), which must never
// be folded, fused, packed or propagated as constants.
#include <catch2/catch.hpp>

#include "pipeline/output_checks.h"
#include "taso/backends/cpu_executor.h"
#include "taso/backends/layouts.h"
#include "taso/ir/executor.h"
#include "taso/ir/graph_copy.h"
#include "taso/ir/ops/names.h"
#include "taso/passes/fold.h"
#include "taso/passes/inference_fusion.h"
#include "taso/pipeline/pipeline.h"
#include "taso/rewrite/cost.h"
#include "test_util.h"

using namespace taso;
using namespace taso::testing;

namespace {

// x[3,1,4] -> LSTM (outputs ["", "Y_h"]) -> Relu -> y.
Graph LstmOmittingY() {
  auto m = NewModel(13);
  AddInput(m, "x", {3, 1, 4});
  AddFloatInit(m, "W", {1, 8, 4}, 0.1f);
  AddFloatInit(m, "R", {1, 8, 2}, 0.2f);
  auto* lstm = AddNode(m, "LSTM", {"x", "W", "R"}, {"", "Y_h"}, "lstm");
  SetIntAttr(lstm, "hidden_size", 2);
  AddNode(m, op_names::kRelu, {"Y_h"}, {"y"}, "relu");
  AddOutput(m, "y");
  auto imported = ImportOnnx(m);
  REQUIRE(imported.ok());
  return std::move(imported->graph);
}

// x[1,2,6,6] -> Conv(w, 3x3, pads 1) -> Mul(scale [1,4,1,1]) -> y, where w and scale are
// initializers that are also graph inputs (the user may feed others).
Graph ConvScaleOverridable() {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {1, 2, 6, 6});
  const ValueId w = AddWeight(g, "w", {4, 2, 3, 3}, 1);
  const ValueId scale = AddWeight(g, "scale", {1, 4, 1, 1}, 2);
  REQUIRE(g.MarkWeightAsInput(w).ok());
  REQUIRE(g.MarkWeightAsInput(scale).ok());
  const ValueId c = AddOp(g, op_names::kConv2D, {x, w}, "c", Params().Set("pads", std::vector<int64_t>{1, 1, 1, 1}));
  REQUIRE(g.AddOutput(AddOp(g, op_names::kMul, {c, scale}, "y")).ok());
  return g;
}

// x[3,5] -> MatMul(w [5,4], an initializer that is also an input) -> y.
Graph MatMulOverridable() {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {3, 5});
  const ValueId w = AddWeight(g, "w", {5, 4}, 3);
  REQUIRE(g.MarkWeightAsInput(w).ok());
  REQUIRE(g.AddOutput(AddOp(g, op_names::kMatMul, {x, w}, "y")).ok());
  return g;
}

// Random values for every input of `g`, initializers that are also inputs included.
TensorMap Overrides(const Graph& g, uint64_t seed) {
  TensorMap in;
  for (ValueId v : g.inputs()) in[g.value(v).name] = RandomTensor(g.value(v).shape, seed++);
  return in;
}

// How far apart two graphs' outputs are on the same inputs.
double DifferenceWithOverrides(const Graph& original, const Graph& changed, const TensorMap& inputs) {
  auto expected = RunReference(original, inputs);
  auto got = RunReference(changed, inputs);
  REQUIRE(expected.ok());
  REQUIRE(got.ok());
  return MaxAbsDifference(*expected, *got);
}

}  // namespace

TEST_CASE("Passes copy an opaque node with an omitted output") {
  const Graph g = LstmOmittingY();
  GraphCopy copy(g);
  REQUIRE(copy.CopyInputs().ok());
  auto order = g.TopologicalOrder();
  REQUIRE(order.ok());
  for (NodeId n : *order) REQUIRE(copy.CopyNode(n).ok());
  auto copied = copy.Finish();
  REQUIRE(copied.ok());
  CHECK(copied->DebugString() == g.DebugString());

  auto fused = FuseIntoConvolutions(g);
  REQUIRE(fused.ok());
  CHECK(fused->DebugString() == g.DebugString());
  auto folded = FoldWeights(g);
  REQUIRE(folded.ok());
  CHECK(folded->DebugString() == g.DebugString());
  CHECK(FindWeightOnly(g).values.size() == static_cast<size_t>(g.num_values()));
}

TEST_CASE("Layouts lay out a graph with an opaque node's omitted output") {
  const Graph g = LstmOmittingY();
  CpuCost cost(nullptr);
  CpuLayouts layouts(cost);
  const CpuLayouts::Plan plan = layouts.Choose(g);
  auto laid_out = layouts.Apply(g, plan);
  REQUIRE(laid_out.ok());
  CHECK(laid_out->DebugString() == g.DebugString());
  LayoutAwareCost priced(cost);
  CHECK(priced.TotalCost(g) >= 0);
}

TEST_CASE("Weights that are also inputs are never fused into a convolution") {
  const Graph g = ConvScaleOverridable();
  CHECK_FALSE(FindWeightOnly(g).values[g.FindValue("w")]);
  auto fused = FuseIntoConvolutions(g);
  REQUIRE(fused.ok());
  CHECK(fused->num_nodes() == 2);  // the Mul stays: its scale may be fed
  const TensorMap inputs = Overrides(g, 7);
  CHECK(DifferenceWithOverrides(g, *fused, inputs) == 0);
  auto separated = SeparateConvolutionBias(*fused);
  REQUIRE(separated.ok());
  auto folded = FoldWeights(*separated);
  REQUIRE(folded.ok());
  CHECK(DifferenceWithOverrides(g, *folded, inputs) == 0);
  // Still inputs, with their defaults.
  for (const std::string name : {"w", "scale"}) {
    const ValueId v = folded->FindValue(name);
    REQUIRE(v != kNoValue);
    CHECK(folded->value(v).is_graph_input);
    CHECK(folded->value(v).is_weight());
  }
}

TEST_CASE("The executors compute with an overriding value, and with the default without one") {
  const Graph g = MatMulOverridable();
  const TensorMap overridden = Overrides(g, 11);
  TensorMap defaults = overridden;
  defaults.erase("w");

  // The same product with w an ordinary input: what the override must give.
  Graph plain;
  const ValueId x = *plain.AddInput("x", DataType::kFloat32, {3, 5});
  const ValueId w = *plain.AddInput("w", DataType::kFloat32, {5, 4});
  REQUIRE(plain.AddOutput(AddOp(plain, op_names::kMatMul, {x, w}, "y")).ok());
  auto expected = RunReference(plain, overridden);
  REQUIRE(expected.ok());
  TensorMap with_default = defaults;
  const TensorData& d = *g.value(g.FindValue("w")).data;
  with_default["w"] = Tensor<float>(d.shape(), std::vector<float>(d.floats().begin(), d.floats().end()));
  auto expected_default = RunReference(plain, with_default);
  REQUIRE(expected_default.ok());

  auto reference = RunReference(g, overridden);
  REQUIRE(reference.ok());
  CHECK(MaxAbsDifference(*reference, *expected) == 0);
  auto executor = CpuExecutor::Create(g);
  REQUIRE(executor.ok());
  auto packed = (*executor)->Run(overridden);
  REQUIRE(packed.ok());
  CHECK(MaxAbsDifference(*packed, *expected) < 1e-5);
  auto after = (*executor)->Run(defaults);  // the default again, after an override
  REQUIRE(after.ok());
  CHECK(MaxAbsDifference(*after, *expected_default) < 1e-5);
}

TEST_CASE("Reference runs give a weight that is a graph output as it is, and read weights in place") {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {3, 5});
  const ValueId w = AddWeight(g, "w", {5, 4}, 3);
  REQUIRE(g.AddOutput(AddOp(g, op_names::kMatMul, {x, w}, "y")).ok());
  REQUIRE(g.AddOutput(w).ok());
  const TensorMap inputs = RandomInputs(g, 5);
  auto out = RunReference(g, inputs);
  REQUIRE(out.ok());
  const TensorData& d = *g.value(w).data;
  CHECK(out->at("w").shape == d.shape());
  CHECK(out->at("w").data == std::vector<float>(d.floats().begin(), d.floats().end()));

  // Nothing fed: the operand is the weight's own storage, not a copy.
  std::vector<Tensor<float>> values(g.num_values());
  CHECK(ReferenceOperand(g, w, values).data.data() == d.floats().data());
  values[w] = RandomTensor({5, 4}, 9);  // fed: the value given
  CHECK(ReferenceOperand(g, w, values).data.data() == values[w].data.data());

  auto checked = pipeline::SelfCheck(g, g, 1);
  REQUIRE(checked.ok());
  CHECK(checked->mismatch.empty());
  CHECK(checked->outputs == 2);
}

TEST_CASE("Random inputs override initializers that are also inputs") {
  const Graph g = MatMulOverridable();
  const TensorMap inputs = RandomInputs(g, 1);
  CHECK(inputs.contains("x"));
  CHECK(inputs.contains("w"));
}

TEST_CASE("OptimizeModel keeps an omitted output and an overridable weight as they were", "[pipeline]") {
  PipelineOptions options;
  options.backend = Backend::kAnalytic;
  options.search = SearchKind::kSubstitutions;
  options.engine = SearchEngine::kBacktracking;
  options.verify_speed = false;
  options.search_options.budget = 10;
  options.self_check = false;  // the LSTM is outside the library
  auto lstm = OptimizeModel(NewOnnxModel(LstmOmittingY()), {}, options);
  REQUIRE(lstm.ok());
  auto exported = ExportOnnx(lstm->model);
  REQUIRE(exported.ok());
  REQUIRE(exported->graph().node_size() == 2);
  CHECK(std::vector<std::string>(exported->graph().node(0).output().begin(),
                                 exported->graph().node(0).output().end()) == std::vector<std::string>{"", "Y_h"});

  options.self_check = true;
  const Graph conv = ConvScaleOverridable();
  auto r = OptimizeModel(NewOnnxModel(conv), {}, options);
  REQUIRE(r.ok());
  const Graph& g = r->model.graph;
  for (const std::string name : {"w", "scale"}) {
    const ValueId v = g.FindValue(name);
    REQUIRE(v != kNoValue);
    CHECK(g.value(v).is_graph_input);
    CHECK(g.value(v).is_weight());
  }
  CHECK(DifferenceWithOverrides(conv, g, Overrides(conv, 13)) < 1e-5);
}

TEST_CASE("OptimizeModel refuses a graph whose tensors exceed the memory limit before any work", "[pipeline]") {
  PipelineOptions options;
  options.backend = Backend::kAnalytic;
  options.search = SearchKind::kSubstitutions;
  options.verify_speed = false;
  options.max_memory_bytes = 100;
  auto r = OptimizeModel(NewOnnxModel(MatMulOverridable()), {}, options);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK_THAT(std::string(r.status().message()),
             Catch::Contains("more than the memory limit of 100 bytes") && Catch::Contains("--max-memory-gb"));
  options.max_memory_bytes = 0;
  CHECK(OptimizeModel(NewOnnxModel(MatMulOverridable()), {}, options).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("A weight that two layers transpose alike, one through an Identity, is folded into one weight") {
  Graph g;
  const ValueId x1 = *g.AddInput("x1", DataType::kFloat32, {4, 8});
  const ValueId x2 = *g.AddInput("x2", DataType::kFloat32, {4, 8});
  const ValueId w = AddWeight(g, "w", {6, 8}, 3);  // one initializer read by both layers
  const Params perm = Params().Set("perm", std::vector<int64_t>{1, 0});
  const ValueId t1 = AddOp(g, op_names::kTranspose, {w}, "t1", perm);
  const ValueId t2 =
      AddOp(g, op_names::kTranspose, {AddOp(g, op_names::kIdentity, {w}, "w_again")}, "t2", perm);  // as PyTorch shares
  const ValueId s1 = AddOp(g, op_names::kRelu, {t1}, "s1"),
                s2 = AddOp(g, op_names::kRelu, {t2}, "s2");  // alike, on alike
  REQUIRE(g.AddOutput(AddOp(g, op_names::kMatMul, {x1, s1}, "y1")).ok());
  REQUIRE(g.AddOutput(AddOp(g, op_names::kMatMul, {x2, s2}, "y2")).ok());
  // A third transpose the other way is not the same computation.
  const ValueId back = AddOp(g, op_names::kTranspose, {t1}, "back", perm);
  REQUIRE(
      g.AddOutput(AddOp(g, op_names::kMatMul, {x1, AddOp(g, op_names::kTranspose, {back}, "again", perm)}, "y3")).ok());

  auto folded = FoldWeights(g);
  REQUIRE(folded.ok());
  int weights = 0;
  for (ValueId v = 0; v < folded->num_values(); ++v) weights += folded->value(v).is_weight();
  CHECK(weights == 2);  // relu(w^T) once, shared by y1 and y2; (w^T)^T^T for y3
  CHECK(folded->num_nodes() == 3);
  const TensorMap inputs = RandomInputs(g, 5);
  auto want = RunReference(g, inputs), got = RunReference(*folded, inputs);
  REQUIRE(want.ok());
  REQUIRE(got.ok());
  CHECK(MaxAbsDifference(*want, *got) == 0);
}

TEST_CASE("Two Identities of a weight and what reads the second fold onto the weight itself") {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {4, 8});
  const ValueId w = AddWeight(g, "w", {8, 6}, 3);
  const ValueId first = AddOp(g, op_names::kIdentity, {w}, "first");
  REQUIRE(g.AddOutput(AddOp(g, op_names::kMatMul, {x, first}, "y1")).ok());
  const ValueId second = AddOp(g, op_names::kIdentity, {w}, "second");  // computes what `first` did
  REQUIRE(g.AddOutput(AddOp(g, op_names::kMatMul, {x, AddOp(g, op_names::kRelu, {second}, "r")}, "y2")).ok());
  auto folded = FoldWeights(g);
  REQUIRE(folded.ok());
  int weights = 0;
  for (ValueId v = 0; v < folded->num_values(); ++v) weights += folded->value(v).is_weight();
  CHECK(weights == 2);  // w, relu(w)
  const TensorMap inputs = RandomInputs(g, 5);
  auto want = RunReference(g, inputs), got = RunReference(*folded, inputs);
  REQUIRE(want.ok());
  REQUIRE(got.ok());
  CHECK(MaxAbsDifference(*want, *got) == 0);
}
