// Einsum in the operator library (ops/einsum.cc) and computed as matrix products
// (taso/passes/einsum_products.h): the kernel gives the equation's sums, forms it does not
// represent stay opaque, the lowering computes what the Einsum does, and the pipeline
// writes it only where the runtime times it faster.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <tuple>

#include "stand_in_runtime.h"
#include "taso/backends/cpu_executor.h"
#include "taso/ir/executor.h"
#include "taso/ir/ops/names.h"
#include "taso/onnx/onnx_io.h"
#include "taso/passes/einsum_products.h"
#include "taso/pipeline/pipeline.h"
#include "test_util.h"

namespace taso {
namespace {

using testing::AddOp;
using testing::CountOps;

Params Equation(const std::string& equation) { return Params().Set("equation", equation); }

// The equation summed letter by letter over every assignment of the letters' values, in
// doubles: the definition, with nothing of the kernel's gathering and products.
std::vector<double> NaiveEinsum(const std::string& a_letters, const std::string& b_letters, const std::string& out,
                                const Tensor<float>& a, const Tensor<float>& b) {
  std::map<char, int64_t> size;
  for (size_t i = 0; i < a_letters.size(); ++i) size[a_letters[i]] = a.shape[i];
  for (size_t i = 0; i < b_letters.size(); ++i) size[b_letters[i]] = b.shape[i];
  std::vector<char> letters;
  for (const auto& [c, n] : size) letters.push_back(c);
  const auto offset = [&](const std::string& term, const std::map<char, int64_t>& at, const Shape& shape) {
    int64_t o = 0;
    for (size_t i = 0; i < term.size(); ++i) o = o * shape[i] + at.at(term[i]);
    return o;
  };
  Shape out_shape;
  for (char c : out) out_shape.push_back(size[c]);
  std::vector<double> y(NumElements(out_shape), 0.0);
  std::map<char, int64_t> at;
  for (char c : letters) at[c] = 0;
  for (;;) {
    y[offset(out, at, out_shape)] += static_cast<double>(a.data[offset(a_letters, at, a.shape)]) *
                                     static_cast<double>(b.data[offset(b_letters, at, b.shape)]);
    size_t d = 0;
    for (; d < letters.size(); ++d) {
      if (++at[letters[d]] < size[letters[d]]) break;
      at[letters[d]] = 0;
    }
    if (d == letters.size()) return y;
  }
}

struct EinsumCase {
  std::string equation, a, b, out;  // the equation, and its terms with the output explicit
  Shape a_shape, b_shape;
  bool one_matmul;  // one MatMul computes it (include/taso/ir/ops/einsum.h)
};

const EinsumCase kCases[] = {
    {"bhid,bhjd->bhij", "bhid", "bhjd", "bhij", {2, 3, 5, 4}, {2, 3, 6, 4}, true},  // attention's scores
    {"bhij,bhjd->bhid", "bhij", "bhjd", "bhid", {2, 3, 5, 6}, {2, 3, 6, 4}, true},  // and values
    {"b i d, b j d -> b i j", "bid", "bjd", "bij", {3, 5, 7}, {3, 4, 7}, true},     // spaces, as users write
    {"ik,kj", "ik", "kj", "ij", {5, 7}, {7, 3}, true},                              // the output implicit
    {"bik,bjk->jbi", "bik", "bjk", "jbi", {2, 5, 3}, {2, 4, 3}, true},              // the output permuted
    {"acb,cbd->dab", "acb", "cbd", "dab", {2, 3, 4}, {3, 4, 5}, true},              // batch letter in the middle
    {"bnd,de->bne", "bnd", "de", "bne", {2, 3, 4}, {4, 5}, true},                   // a linear map: two rows
    {"dn,bde->nbe", "dn", "bde", "nbe", {4, 3}, {2, 4, 5}, true},                   // two columns
    {"bij,bk->bijk", "bij", "bk", "bijk", {2, 3, 4}, {2, 5}, false},                // none summed
    {"xyzw,yzwv->xv", "xyzw", "yzwv", "xv", {3, 2, 3, 2}, {2, 3, 2, 4}, false},     // three summed letters
    {"bij,bjk->ibk", "bij", "bjk", "ibk", {2, 3, 4}, {2, 4, 5}, true},              // batch, output permuted
    {"bnd,bde->bne", "bnd", "bde", "bne", {2, 3, 4}, {2, 4, 5}, true},
    {"bnmd,bde->bnme", "bnmd", "bde", "bnme", {2, 3, 2, 4}, {2, 4, 5}, false},  // two rows and a batch letter
};

// A graph computing the case's Einsum of two run-time inputs.
Graph EinsumGraph(const EinsumCase& c) {
  Graph g;
  const ValueId a = *g.AddInput("a", DataType::kFloat32, c.a_shape);
  const ValueId b = *g.AddInput("b", DataType::kFloat32, c.b_shape);
  REQUIRE(g.AddOutput(AddOp(g, op_names::kEinsum, {a, b}, "y", Equation(c.equation))).ok());
  return g;
}

TEST_CASE("Einsum's kernel gives the sums its equation states") {
  for (const EinsumCase& c : kCases) {
    INFO(c.equation);
    const Graph g = EinsumGraph(c);
    const Tensor<float> a = testing::RandomTensor(c.a_shape, 1), b = testing::RandomTensor(c.b_shape, 2);
    absl::StatusOr<TensorMap> out = RunReference(g, {{"a", a}, {"b", b}});
    REQUIRE(out.ok());
    const Tensor<float>& y = out->at("y");
    const std::vector<double> want = NaiveEinsum(c.a, c.b, c.out, a, b);
    REQUIRE(y.data.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) CHECK(y.data[i] == Approx(want[i]).margin(1e-5));
  }
}

TEST_CASE("The cpu executor runs Einsums, in the buffers it gives them, as the reference executor does") {
  // Attention's two products, the first read by a Relu: a kernel that wrote elsewhere
  // than the executor's buffer would leave the later nodes reading garbage.
  Graph g;
  const ValueId q = *g.AddInput("q", DataType::kFloat32, {2, 3, 5, 4});
  const ValueId k = *g.AddInput("k", DataType::kFloat32, {2, 3, 6, 4});
  const ValueId v = *g.AddInput("v", DataType::kFloat32, {2, 3, 6, 4});
  const ValueId scores = AddOp(g, op_names::kEinsum, {q, k}, "scores", Equation("bhid,bhjd->bhij"));
  const ValueId weights = AddOp(g, op_names::kRelu, {scores}, "weights");
  REQUIRE(g.AddOutput(AddOp(g, op_names::kEinsum, {weights, v}, "y", Equation("bhij,bhjd->bhid"))).ok());
  absl::StatusOr<std::unique_ptr<CpuExecutor>> executor = CpuExecutor::Create(g);
  REQUIRE(executor.ok());
  const TensorMap inputs = RandomInputs(g, 3);
  absl::StatusOr<TensorMap> got = (*executor)->Run(inputs);
  absl::StatusOr<TensorMap> want = RunReference(g, inputs);
  REQUIRE(got.ok());
  REQUIRE(want.ok());
  CHECK(got->at("y").data == want->at("y").data);
}

TEST_CASE("Einsum refuses operands its equation does not fit") {
  Graph g;
  const ValueId a = *g.AddInput("a", DataType::kFloat32, {2, 3});
  const ValueId b = *g.AddInput("b", DataType::kFloat32, {4, 5});
  absl::StatusOr<std::vector<ValueId>> wrong_size =
      g.AddNode(testing::Op(op_names::kEinsum), Equation("ij,jk->ik"), {a, b});
  REQUIRE_FALSE(wrong_size.ok());
  CHECK_THAT(std::string(wrong_size.status().message()), Catch::Contains("letter 'j'"));
  CHECK_FALSE(g.AddNode(testing::Op(op_names::kEinsum), Equation("ijk,jk->ik"), {a, b}).ok());  // rank
}

// An ONNX model of one Einsum of inputs of `a` and `b` shapes, then a Relu.
onnx::ModelProto EinsumModel(const std::string& equation, std::vector<int64_t> a, std::vector<int64_t> b,
                             int opset = 13) {
  onnx::ModelProto m = testing::NewModel(opset);
  testing::AddInput(m, "a", std::move(a));
  testing::AddInput(m, "b", std::move(b));
  testing::SetStringAttr(testing::AddNode(m, "Einsum", {"a", "b"}, {"e"}), "equation", equation);
  testing::AddNode(m, "Relu", {"e"}, {"y"});
  testing::AddOutput(m, "y");
  return m;
}

TEST_CASE("An export's product-form Einsum imports typed; the forms the library does not state stay opaque") {
  // ONNX 1.12 infers an Einsum's rank only: what follows is typed by the library's Einsum.
  const OnnxModel typed = testing::ImportFolded(EinsumModel("b i d, b j d -> b i j", {2, 5, 4}, {2, 6, 4}));
  CHECK(CountOps(typed.graph, op_names::kEinsum) == 1);
  CHECK(CountOps(typed.graph, op_names::kRelu) == 1);
  CHECK(typed.graph.value(typed.graph.outputs()[0]).shape == Shape{2, 5, 6});
  for (const auto& [equation, a, b] : std::vector<std::tuple<std::string, std::vector<int64_t>, std::vector<int64_t>>>{
           {"...ij,...jk->...ik", {2, 3, 4}, {2, 4, 5}},  // an ellipsis
           {"ii,ij->j", {3, 3}, {3, 4}},                  // a diagonal
           {"ij,jk->k", {3, 4}, {4, 5}},                  // i summed within the first operand alone
           {"ij,jk->ik", {3, 4}, {5, 6}},                 // j of two sizes: ONNX Runtime's to refuse
           {"iJ,Jk", {3, 4}, {4, 5}},                     // implicit output over both cases
       }) {
    INFO(equation);
    const OnnxModel opaque = testing::ImportFolded(EinsumModel(equation, a, b));
    CHECK(CountOps(opaque.graph, op_names::kEinsum) == 0);
  }
}

TEST_CASE("An implicit Einsum of uppercase letters, which ONNX 1.12's inference mishandles, imports and exports") {
  // ONNX's inference counts "iJ,Jk"'s letters at [c - 'a'] and dies: it must not see it.
  // The output's type is the file's, as exporters declare it.
  onnx::ModelProto proto = EinsumModel("iJ,Jk", {3, 4}, {4, 5});
  auto* shape = proto.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  for (int64_t d : {3, 5}) shape->add_dim()->set_dim_value(d);
  const OnnxModel model = testing::ImportFolded(proto);
  CHECK(CountOps(model.graph, op_names::kEinsum) == 0);  // mixed case: opaque
  CHECK_FALSE(OnnxInferenceChecks(model));               // what the written model's summary says
  absl::StatusOr<onnx::ModelProto> written = ExportOnnx(model);
  INFO(written.status().ToString());
  CHECK(written.ok());
}

TEST_CASE("An Einsum written back keeps its equation; its product form computes the same") {
  const OnnxModel model = testing::ImportFolded(EinsumModel("bhij,bhjd->bhid", {1, 2, 3, 4}, {1, 2, 4, 5}));
  CHECK(OnnxInferenceChecks(model));
  absl::StatusOr<onnx::ModelProto> written = ExportOnnx(model);
  REQUIRE(written.ok());
  const auto einsum = std::find_if(written->graph().node().begin(), written->graph().node().end(),
                                   [](const onnx::NodeProto& n) { return n.op_type() == "Einsum"; });
  REQUIRE(einsum != written->graph().node().end());
  CHECK(einsum->attribute(0).s() == "bhij,bhjd->bhid");
}

TEST_CASE("Einsums one MatMul computes become MatMul; the others stay") {
  for (const EinsumCase& c : kCases) {
    INFO(c.equation);
    const Graph g = EinsumGraph(c);
    absl::StatusOr<EinsumsLowered> lowered = LowerEinsumsToProducts(g);
    REQUIRE(lowered.ok());
    CHECK(lowered->einsums == (c.one_matmul ? 1 : 0));
    CHECK(CountOps(lowered->graph, op_names::kEinsum) == (c.one_matmul ? 0 : 1));
    CHECK(CountOps(lowered->graph, op_names::kMatMul) == (c.one_matmul ? 1 : 0));
    CHECK(testing::OutputDifference(g, lowered->graph) < 1e-5);
    // Transposes only where an order differs: attention's keys [b, h, j, d] are read as
    // [b, h, d, j]; its values and "ik,kj" are in MatMul's order already.
    if (c.equation == "ik,kj") CHECK(CountOps(lowered->graph, op_names::kTranspose) == 0);
    if (c.equation == "bhij,bhjd->bhid") CHECK(CountOps(lowered->graph, op_names::kTranspose) == 0);
    if (c.equation == "bhid,bhjd->bhij") CHECK(CountOps(lowered->graph, op_names::kTranspose) == 1);
  }
}

TEST_CASE("The pipeline writes Einsums as products where the runtime times them faster, else the input",
          "[speed_check]") {
  const OnnxModel model = testing::ImportFolded(EinsumModel("bhid,bhjd->bhij", {1, 2, 8, 4}, {1, 2, 6, 4}));
  double einsum_ms = 0;
  bool lowered = false;
  SECTION("faster") { einsum_ms = 2, lowered = true; }
  SECTION("slower") { einsum_ms = 0.5, lowered = false; }
  testing::OpPricedRuntime runtime(op_names::kEinsum, einsum_ms);
  const PipelineOptions options = testing::SpeedCheckedBy(runtime);
  const PipelineResult r = testing::OptimizedWithSpeedCheck(model, options);
  CHECK(r.search.rules_applied.count(std::string(kEinsumProductRewrite)) == (lowered ? 1 : 0));
  CHECK(CountOps(r.model.graph, op_names::kEinsum) == (lowered ? 0 : 1));
  CHECK(CountOps(r.model.graph, op_names::kMatMul) == (lowered ? 1 : 0));
  CHECK((r.speed_check->extraction == kEinsumsAsProducts) == lowered);
  if (lowered)
    CHECK_THAT(SummaryText(options, r, "m"),
               Catch::Contains("the graph with its einsums computed as matrix products is written"));
}

// ((x . y) . z) w^T with x [256, 4], y [4, 256], z [256, 4], w [3, 4], the last product
// an Einsum "ij,kj->ik": the analytic search computes x . (y . z) (no [256, 256] product);
// the Einsum is the lowering's.
Graph ChainThenEinsum() {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {256, 4});
  const ValueId y = *g.AddInput("y", DataType::kFloat32, {4, 256});
  const ValueId z = *g.AddInput("z", DataType::kFloat32, {256, 4});
  const ValueId w = *g.AddInput("w", DataType::kFloat32, {3, 4});
  const ValueId chain = AddOp(g, op_names::kMatMul, {AddOp(g, op_names::kMatMul, {x, y}, "xy"), z}, "chain");
  REQUIRE(g.AddOutput(AddOp(g, op_names::kEinsum, {chain, w}, "out", Equation("ij,kj->ik"))).ok());
  return g;
}

bool HasSquareProduct(const Graph& g) {
  for (ValueId v = 0; v < g.num_values(); ++v)
    if (g.value(v).shape == Shape{256, 256}) return true;
  return false;
}

TEST_CASE("Where the speed check keeps the search's graph, its Einsums as products are timed against it",
          "[speed_check]") {
  // 1 ms, plus 2 for the [256, 256] product the search removes, plus 1 for an Einsum: the
  // search's graph (2 ms) beats the input (4 ms), the input lowered (3 ms) does not beat
  // it, the search's graph lowered (1 ms) does.
  testing::PricedRuntime runtime(
      [](const Graph& g) { return 1.0 + (HasSquareProduct(g) ? 2 : 0) + (CountOps(g, op_names::kEinsum) ? 1 : 0); });
  const OnnxModel model = NewOnnxModel(ChainThenEinsum());
  const PipelineOptions options = testing::SpeedCheckedBy(runtime);
  const PipelineResult r = testing::OptimizedWithSpeedCheck(model, options);
  CHECK(r.speed_check->extraction == kSearchWithEinsumsAsProducts);
  CHECK(r.speed_check->beat_search);
  CHECK(r.search.rules_applied.count(std::string(kEinsumProductRewrite)) == 1);
  CHECK(r.search.rules_applied.size() > 1);  // the search's rewrites too
  CHECK(CountOps(r.model.graph, op_names::kEinsum) == 0);
  CHECK_FALSE(HasSquareProduct(r.model.graph));
  CHECK(testing::OutputDifference(model.graph, r.model.graph) < 1e-3);
}

// x w1 + x w2 (which the search merges into x (w1 + w2)), then an Einsum "ij,kj->ik" with
// a weight.
Graph SumThenEinsum() {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {16, 8});
  const ValueId w1 = testing::AddWeight(g, "w1", {8, 8}, 1), w2 = testing::AddWeight(g, "w2", {8, 8}, 2);
  const ValueId w3 = testing::AddWeight(g, "w3", {4, 8}, 3);
  const ValueId sum =
      AddOp(g, op_names::kAdd, {AddOp(g, op_names::kMatMul, {x, w1}, "m1"), AddOp(g, op_names::kMatMul, {x, w2}, "m2")},
            "sum");
  REQUIRE(g.AddOutput(AddOp(g, op_names::kEinsum, {sum, w3}, "out", Equation("ij,kj->ik"))).ok());
  return g;
}

// Prices a node at 1 us, an Einsum at 10 us: the search's cost model of a runtime whose
// Einsum is slow.
class SlowEinsumCost : public CostModel {
 public:
  std::string name() const override { return "slow-einsum"; }
  double NodeCost(const Graph& g, NodeId n) override { return g.node(n).op->name() == op_names::kEinsum ? 1e-5 : 1e-6; }
};

TEST_CASE("Graphs the search's costs price below its own are timed first; the fastest of them is written",
          "[speed_check]") {
  // By those prices the search's graph (one product, then the Einsum) gains on the input,
  // and the lowered graphs gain more: they are timed first, the search's with its Einsum
  // lowered (cheapest) first of all, then the input lowered against it. The runtime takes
  // 1 ms a node, 3 for an Einsum, plus `lowered_ms` for a graph without one, less
  // `three_products_bonus_ms` for the input lowered (its three products).
  const OnnxModel model = NewOnnxModel(SumThenEinsum());
  double lowered_ms = 0, three_products_bonus_ms = 0;
  std::string written;
  SECTION("the lowered graphs faster") { written = std::string(kSearchWithEinsumsAsProducts); }
  SECTION("the input lowered fastest") { three_products_bonus_ms = 3, written = std::string(kEinsumsAsProducts); }
  SECTION("the lowered graphs slower") { lowered_ms = 10; }
  testing::PricedRuntime runtime([&](const Graph& g) {
    const int einsums = CountOps(g, op_names::kEinsum);
    return g.num_nodes() + 2.0 * einsums + (einsums == 0 ? lowered_ms : 0) -
           (CountOps(g, op_names::kMatMul) == 3 ? three_products_bonus_ms : 0);
  });
  SlowEinsumCost prices;
  PipelineOptions options = testing::SpeedCheckedBy(runtime);
  options.cost_model = &prices;
  const PipelineResult r = testing::OptimizedWithSpeedCheck(model, options);
  const PipelineResult::SpeedCheck& check = *r.speed_check;
  const bool lowered = !written.empty();
  CHECK(check.timing.SecondFaster());
  CHECK(check.timed_before_search == lowered);
  CHECK(CountOps(r.model.graph, op_names::kEinsum) == (lowered ? 0 : 1));
  CHECK(check.extraction == written);
  if (written == kSearchWithEinsumsAsProducts) {
    CHECK(CountOps(r.model.graph, op_names::kMatMul) == 2);  // x (w1 + w2), then the product
    CHECK(check.comparisons == 2);  // the input lowered against it, not faster; the search's never timed
    CHECK(check.beat_other.empty());
    CHECK_THAT(SummaryText(options, r, "m"), Catch::Contains("timed before the search's result"));
    CHECK_THAT(JsonReport(options, r), Catch::Contains("\"timed_before_search\": true"));
  } else if (written == kEinsumsAsProducts) {
    CHECK(CountOps(r.model.graph, op_names::kMatMul) == 3);
    CHECK(check.comparisons == 3);  // the first against the input; the second against it, then the input
    CHECK(check.beat_other == kSearchWithEinsumsAsProducts);
    CHECK_THAT(SummaryText(options, r, "m"),
               Catch::Contains("is written: measurably faster than the search's graph with its einsums computed"));
    CHECK_THAT(JsonReport(options, r), Catch::Contains("\"beat_other\": \""));
  } else {
    CHECK(CountOps(r.model.graph, op_names::kMatMul) == 1);  // x (w1 + w2), then the Einsum
    CHECK(check.other_extractions_timed >= 2);               // both lowered graphs, before the search's
    CHECK(check.rewrites_kept == check.rewrites);
  }
  CHECK(testing::OutputDifference(model.graph, r.model.graph) < 1e-4);
}

// Prices a node at 1 us, an Einsum at 0.1 us: the search's cost model of a runtime whose
// Einsum is fast, which prices the lowered graphs above the search's own.
class FastEinsumCost : public CostModel {
 public:
  std::string name() const override { return "fast-einsum"; }
  double NodeCost(const Graph& g, NodeId n) override { return g.node(n).op->name() == op_names::kEinsum ? 1e-7 : 1e-6; }
};

TEST_CASE("Graphs priced above the search's are each timed after it; the fastest of them is written", "[speed_check]") {
  // The runtime takes 5 ms for a graph with an Einsum (the search's is no faster than the
  // input), 4 ms for the input lowered (three products), 3 ms for the search's graph
  // lowered, which is timed after the input lowered and written where faster than it.
  const OnnxModel model = NewOnnxModel(SumThenEinsum());
  double search_lowered_ms = 3;
  SECTION("the later one fastest") {}
  SECTION("the first one fastest") { search_lowered_ms = 4.5; }
  testing::PricedRuntime runtime([&](const Graph& g) {
    if (CountOps(g, op_names::kEinsum) > 0) return 5.0;
    return CountOps(g, op_names::kMatMul) == 3 ? 4.0 : search_lowered_ms;
  });
  FastEinsumCost prices;
  PipelineOptions options = testing::SpeedCheckedBy(runtime);
  options.cost_model = &prices;
  const PipelineResult r = testing::OptimizedWithSpeedCheck(model, options);
  const PipelineResult::SpeedCheck& check = *r.speed_check;
  CHECK_FALSE(check.timed_before_search);
  CHECK(CountOps(r.model.graph, op_names::kEinsum) == 0);
  CHECK(check.timing.SecondFaster());
  if (search_lowered_ms < 4) {
    CHECK(check.extraction == kSearchWithEinsumsAsProducts);
    CHECK(check.beat_other == kEinsumsAsProducts);
    CHECK(CountOps(r.model.graph, op_names::kMatMul) == 2);
  } else {
    CHECK(check.extraction == kEinsumsAsProducts);
    CHECK(check.beat_other.empty());
    CHECK(CountOps(r.model.graph, op_names::kMatMul) == 3);
  }
  CHECK(testing::OutputDifference(model.graph, r.model.graph) < 1e-4);
}

TEST_CASE("PyTorch's einsum attention imports typed, and its products compute the same") {
  ImportOptions folding;  // the heads' Reshape targets are shape arithmetic
  folding.fold_shape_arithmetic = true;
  const OnnxModel model = testing::TorchPatternExport("einsum_attention_t64", folding);
  CHECK(CountOps(model.graph, op_names::kEinsum) == 2);
  CHECK(CountOps(model.graph, op_names::kSoftmax) == 1);  // typed after the first Einsum
  absl::StatusOr<EinsumsLowered> lowered = LowerEinsumsToProducts(model.graph);
  REQUIRE(lowered.ok());
  CHECK(lowered->einsums == 2);
  CHECK(testing::OutputDifference(model.graph, lowered->graph) < 1e-4);
}

}  // namespace
}  // namespace taso
