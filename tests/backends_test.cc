// The kernel backends this build has: cpu (oneDNN) always, cuda where the toolkit was found.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/hash/hash.h"
#include "backends/cpu/cpu_kernel.h"
#include "backends/kernel_registry.h"
#include "backends/timing.h"
#include "taso/backends/backends.h"
#include "taso/backends/cost_cache.h"
#include "taso/backends/cost_key.h"
#include "taso/backends/cpu_cost.h"
#include "taso/backends/measured_cost.h"
#include "taso/ir/ops/names.h"
#include "test_util.h"

TEST_CASE("Backends report what is built and what can run") {
  auto backends = taso::AvailableBackends();
  REQUIRE(backends.size() == 3);
  CHECK(backends[0].name == "cpu");
  CHECK(backends[0].usable);
  CHECK_THAT(backends[0].detail, Catch::StartsWith("oneDNN 2."));
  CHECK(backends[1].name == "cuda");
#ifdef TASO_WITH_CUDA
  CHECK(backends[1].compiled);
  CHECK_THAT(backends[1].detail, Catch::Contains("cuDNN") && Catch::Contains("cuBLAS"));
#else
  CHECK_FALSE(backends[1].compiled);
  CHECK_FALSE(backends[1].usable);
#endif
  CHECK(backends[2].name == "analytic");
}

namespace {

taso::ValueId AddOp(taso::Graph& g, const std::string& op, std::vector<taso::ValueId> in, taso::Params p = {}) {
  auto v = g.AddNode(taso::testing::Op(op), std::move(p), std::move(in));
  REQUIRE(v.ok());
  return (*v)[0];
}

}  // namespace

TEST_CASE("Every cpu kernel prepares and runs for the operators rules produce") {
  using taso::Params;
  taso::Graph g;
  auto x = g.AddInput("x", taso::DataType::kFloat32, {1, 8, 10, 10});
  auto m = g.AddInput("m", taso::DataType::kFloat32, {6, 8});
  auto s = g.AddInput("s", taso::DataType::kFloat32, {});
  REQUIRE((x.ok() && m.ok() && s.ok()));
  auto w = g.AddWeight("w", taso::TensorData::Float({8, 8, 3, 3}, std::vector<float>(8 * 8 * 9, 0.1f)));
  auto dw = g.AddWeight("dw", taso::TensorData::Float({8, 1, 3, 3}, std::vector<float>(8 * 9, 0.1f)));
  auto mw = g.AddWeight("mw", taso::TensorData::Float({8, 4}, std::vector<float>(32, 0.1f)));
  REQUIRE((w.ok() && dw.ok() && mw.ok()));
  const Params window = Params().Set("strides", std::vector<int64_t>{2, 2}).Set("padding", "same");
  const auto conv =
      AddOp(g, taso::op_names::kConv2D, {*x, *w}, Params(window).Set("grouping", "dense").Set("activation", "relu"));
  const auto dconv = AddOp(g, taso::op_names::kConv2D, {*x, *dw},
                           Params(window).Set("grouping", "depthwise").Set("activation", "none"));
  const auto pool = AddOp(g, taso::op_names::kMaxPool, {*x}, Params(window).Set("kernel", std::vector<int64_t>{3, 3}));
  const auto avg = AddOp(g, taso::op_names::kAveragePool, {*x},
                         Params(window).Set("kernel", std::vector<int64_t>{3, 3}).Set("count_include_pad", int64_t{1}));
  const auto sum =
      AddOp(g, taso::op_names::kAdd,
            {AddOp(g, taso::op_names::kMul, {conv, dconv}), AddOp(g, taso::op_names::kScalarMul, {pool, *s})});
  const auto cat = AddOp(g, taso::op_names::kConcat, {sum, AddOp(g, taso::op_names::kRelu, {avg})},
                         Params().Set("axis", int64_t{1}));
  const auto mm = AddOp(g, taso::op_names::kMatMul, {*m, *mw});
  const auto tr = AddOp(g, taso::op_names::kTranspose, {*m}, Params().Set("perm", std::vector<int64_t>{1, 0}));
  // Along the rows (not a view: each piece is strided in the input).
  auto parts = g.AddNode(taso::testing::Op(taso::op_names::kSplit),
                         Params().Set("axis", int64_t{2}).Set("sizes", std::vector<int64_t>{3, 7}), {*x});
  REQUIRE(parts.ok());
  for (taso::ValueId v : {cat, mm, tr, (*parts)[0], (*parts)[1]}) REQUIRE(g.AddOutput(v).ok());
  taso::CpuCost cost(nullptr);
  for (taso::NodeId n = 0; n < g.num_nodes(); ++n) {
    INFO(g.node(n).op->name());
    CHECK(cost.NodeCost(g, n) > 0);
  }
  // None fell back to the estimate (blockable ones are measured with their blocked form).
  CHECK(cost.counts().measured >= g.num_nodes());
  CHECK(cost.counts().estimated == 0);
}

TEST_CASE("Reshapes and splits into contiguous pieces cost nothing on the cpu") {
  using taso::Params;
  taso::Graph g;
  auto x = g.AddInput("x", taso::DataType::kFloat32, {1, 8, 10, 10});
  REQUIRE(x.ok());
  auto channels = g.AddNode(taso::testing::Op(taso::op_names::kSplit),
                            Params().Set("axis", int64_t{1}).Set("sizes", std::vector<int64_t>{3, 5}), {*x});
  auto rows = g.AddNode(taso::testing::Op(taso::op_names::kSplit),
                        Params().Set("axis", int64_t{2}).Set("sizes", std::vector<int64_t>{3, 7}), {*x});
  auto flat = g.AddNode(taso::testing::Op(taso::op_names::kFlatten), Params(), {*x});
  REQUIRE((channels.ok() && rows.ok() && flat.ok()));
  taso::CpuCost cost(nullptr);
  CHECK(cost.NodeCost(g, 0) == 0);
  CHECK(cost.NodeCost(g, 1) > 0);
  CHECK(cost.NodeCost(g, 2) == 0);
}

TEST_CASE("Cost measurements read weights from memory, as a whole model's run does") {
  using taso::timing::WeightCopies;
  const int64_t mib = int64_t{1} << 20, cache = 32 * mib;
  // A matrix-vector product's 1 MiB weight: copies spanning twice the cache, 64 at most.
  CHECK(WeightCopies(1 * mib, 4096, cache) == 64);
  CHECK(WeightCopies(4 * mib, 4096, cache) == 16);
  // Weights larger than twice the cache come from memory in any case.
  CHECK(WeightCopies(100 * mib, 4096, cache) == 1);
  // Kernels whose weights are not most of what they read: a convolution, a matrix
  // product over 128 tokens.
  CHECK(WeightCopies(18 * 1024, 6 * mib, cache) == 1);
  CHECK(WeightCopies(4 * mib, 1 * mib, cache) == 1);
  // No weights at all.
  CHECK(WeightCopies(0, 4096, cache) == 1);
  // Copies are bounded by memory (512 MiB in all), which a large cache reaches.
  CHECK(WeightCopies(8 * mib, mib / 4, 256 * mib) == 62);
  CHECK(taso::timing::LastLevelCacheBytes() > 0);

  // Which inputs the kernels read as weights: a layer's matrices, kernels and biases,
  // not attention's batched operands.
  auto info = [](taso::Shape s) {
    taso::InputInfo i;
    i.shape = std::move(s);
    return i;
  };
  const taso::cpu::Kernel* matmul = taso::cpu::FindKernel(taso::op_names::kMatMul);
  const taso::cpu::Kernel* conv = taso::cpu::FindKernel(taso::op_names::kConv2D);
  REQUIRE((matmul && conv));
  const std::vector<taso::InputInfo> layer = {info({1, 512}), info({512, 512})};
  const std::vector<taso::InputInfo> attention = {info({16, 128, 64}), info({16, 64, 128})};
  CHECK(!matmul->ReadsWeight(0, layer));
  CHECK(matmul->ReadsWeight(1, layer));
  CHECK(!matmul->ReadsWeight(1, attention));
  const std::vector<taso::InputInfo> conv_in = {info({1, 8, 10, 10}), info({4, 8, 3, 3}), info({4})};
  CHECK(!conv->ReadsWeight(0, conv_in));
  CHECK(conv->ReadsWeight(1, conv_in));
  CHECK(conv->ReadsWeight(2, conv_in));
}

TEST_CASE("Kernels measured in turn: every kernel runs once in each round, in a rotated order") {
  std::vector<int> order;
  auto run = [&order](int which, double seconds) {
    return [&order, which, seconds]() -> absl::StatusOr<double> {
      order.push_back(which);
      return seconds;
    };
  };
  auto medians = taso::timing::KernelMediansInTurn({run(0, 2e-3), run(1, 5e-3)});
  REQUIRE(medians.ok());
  CHECK(*medians == std::vector<double>{2e-3, 5e-3});
  // Two warm-up rounds, then 10 rounds (the faster kernel's 10 ms is reached only then).
  REQUIRE(order.size() == 24);
  for (size_t round = 0; round < order.size() / 2; ++round) {
    CHECK(order[2 * round] != order[2 * round + 1]);
    if (round >= 2) CHECK(order[2 * round] == static_cast<int>(round % 2));
  }
  // A slow kernel stops the rounds after 3 (with the warm-up, 5 runs each).
  order.clear();
  medians = taso::timing::KernelMediansInTurn({run(0, 1e-3), run(1, 0.3)});
  REQUIRE(medians.ok());
  CHECK(*medians == std::vector<double>{1e-3, 0.3});
  CHECK(order.size() == 10);
  // A run that fails fails the measurement.
  auto failing = []() -> absl::StatusOr<double> { return absl::InternalError("no"); };
  CHECK_FALSE(taso::timing::KernelMediansInTurn({run(0, 1e-3), failing}).ok());
}

TEST_CASE("Two models timed in turn are timed as each runs again and again, not just after the other") {
  // A model whose run right after the other's is twice as slow (it finds the caches as
  // the other left them), as small weight-bound models run in a pair.
  char last = ' ';
  auto model = [&last](char name, double warm) {
    return [&last, name, warm]() -> absl::StatusOr<double> {
      const double seconds = last == name ? warm : 2 * warm;
      last = name;
      return seconds;
    };
  };
  const auto medians = taso::timing::InTurn(model('a', 1e-3), model('b', 3e-3), 20);
  REQUIRE(medians.ok());
  CHECK(medians->first == 1e-3);
  CHECK(medians->second == 3e-3);
  auto failing = []() -> absl::StatusOr<double> { return absl::InternalError("no"); };
  CHECK_FALSE(taso::timing::InTurn(model('a', 1e-3), failing, 20).ok());
}

TEST_CASE("A node's other layout is measured in turn with it, so the layout choice compares like with like") {
  using taso::Params;
  taso::Graph g;
  auto x = g.AddInput("x", taso::DataType::kFloat32, {1, 16, 12, 12});
  auto w = g.AddWeight("w", taso::TensorData::Float({16, 16, 3, 3}, std::vector<float>(16 * 16 * 9, 0.1f)));
  REQUIRE((x.ok() && w.ok()));
  const Params conv = Params()
                          .Set("strides", std::vector<int64_t>{1, 1})
                          .Set("padding", "same")
                          .Set("grouping", "dense")
                          .Set("activation", "none");
  AddOp(g, taso::op_names::kConv2D, {*x, *w}, conv);
  AddOp(g, taso::op_names::kRelu, {*x});
  auto path = std::filesystem::temp_directory_path() / "taso_alternatives_test.sqlite";
  std::filesystem::remove(path);
  {
    auto cache = taso::CostCache::Open(path.string());
    REQUIRE(cache.ok());
    taso::CpuCost cost(*std::move(cache));
    CHECK(cost.NodeCost(g, 0) > 0);
    CHECK(cost.counts().measured == 2);  // plain and blocked
    const taso::Node& n = g.node(0);
    bool measured = false;
    CHECK(cost.Cost(*n.op, taso::cpu::WithLayout(n.params, true), g.InputInfos(n), g.OutputTypes(n), &measured) > 0);
    CHECK(measured);
    CHECK(cost.counts().measured == 2);  // nothing new
  }
  {
    // A fresh cost model finds both in the file; a known alternative is not measured again.
    auto cache = taso::CostCache::Open(path.string());
    REQUIRE(cache.ok());
    taso::CpuCost cost(*std::move(cache));
    const taso::Node& n = g.node(0);
    cost.Cost(*n.op, taso::cpu::WithLayout(n.params, true), g.InputInfos(n), g.OutputTypes(n));
    CHECK(cost.counts().cached == 1);
    CHECK(cost.NodeCost(g, 0) > 0);
    CHECK(cost.counts().cached == 2);
    CHECK(cost.counts().measured == 0);
    // A relu on 16 channels blocks too: measured with its blocked form.
    CHECK(cost.NodeCost(g, 1) > 0);
    CHECK(cost.counts().measured == 2);
  }
  std::filesystem::remove(path);
}

namespace {

// A dense 3x3 convolution's parts, for cost keys.
struct ConvParts {
  const taso::OpDef* op = taso::testing::Op(taso::op_names::kConv2D);
  taso::Params params = taso::Params()
                            .Set("strides", std::vector<int64_t>{2, 2})
                            .Set("padding", "same")
                            .Set("grouping", "dense")
                            .Set("activation", "relu");
  std::vector<taso::InputInfo> inputs = {Input({1, 16, 12, 12}), Input({32, 16, 3, 3})};
  std::vector<taso::OutputType> outputs = {taso::OutputType{.shape = {1, 32, 6, 6}}};

  static taso::InputInfo Input(taso::Shape shape) {
    taso::InputInfo i;
    i.shape = std::move(shape);
    return i;
  }
  static taso::InputInfo Absent() {
    taso::InputInfo i;
    i.present = false;
    return i;
  }
  taso::CostKey Key() const { return taso::CostKey(*op, params, inputs, outputs); }
};

size_t HashOf(const taso::CostKey& key) { return absl::Hash<taso::CostKey>{}(key); }

}  // namespace

TEST_CASE("Cost keys of equal operators, parameters and shapes are equal and hash alike") {
  const ConvParts a, b;  // equal parts, held apart
  REQUIRE(a.op != nullptr);
  CHECK(a.Key() == b.Key());
  CHECK(HashOf(a.Key()) == HashOf(b.Key()));
  CHECK(a.Key().ToString() == b.Key().ToString());
  // Neither an input's type nor a constant's value is part of the key.
  ConvParts typed;
  typed.inputs[0].dtype = taso::DataType::kInt64;
  CHECK(typed.Key() == a.Key());
  CHECK(HashOf(typed.Key()) == HashOf(a.Key()));
  ConvParts halves, quarters;
  const auto half = taso::TensorData::Float({32, 16, 3, 3}, std::vector<float>(32 * 16 * 9, 0.5f));
  const auto quarter = taso::TensorData::Float({32, 16, 3, 3}, std::vector<float>(32 * 16 * 9, 0.25f));
  halves.inputs[1].constant = half.get();
  quarters.inputs[1].constant = quarter.get();
  CHECK(halves.Key() == quarters.Key());
  CHECK(HashOf(halves.Key()) == HashOf(quarters.Key()));
  // A tensor parameter counts by its content, not by which tensor holds it.
  ConvParts c, d;
  c.params.Set("table", taso::TensorData::Float({3}, {1, 2, 3}));
  d.params.Set("table", taso::TensorData::Float({3}, {1, 2, 3}));
  CHECK(c.Key() == d.Key());
  CHECK(HashOf(c.Key()) == HashOf(d.Key()));
}

TEST_CASE("An owned cost key outlives the parts it was built from") {
  std::optional<taso::CostKey> owned;
  {
    ConvParts scoped;
    const auto weight = taso::TensorData::Float({32, 16, 3, 3}, std::vector<float>(32 * 16 * 9, 0.5f));
    scoped.inputs[1].constant = weight.get();
    owned = scoped.Key().Owned();
  }
  ConvParts fresh;  // constant too, with other values
  const auto other_weight = taso::TensorData::Float({32, 16, 3, 3}, std::vector<float>(32 * 16 * 9, 0.25f));
  fresh.inputs[1].constant = other_weight.get();
  CHECK(*owned == fresh.Key());
  CHECK(HashOf(*owned) == HashOf(fresh.Key()));
  CHECK(owned->ToString() == fresh.Key().ToString());
  CHECK(owned->params() == fresh.params);
  CHECK(owned->inputs()[1].constant == nullptr);
}

TEST_CASE("Cost keys differ in each thing they hold, in memo and in text alike") {
  const ConvParts base;
  std::vector<std::pair<std::string, ConvParts>> others;
  auto other = [&others](std::string what) -> ConvParts& { return others.emplace_back(what, ConvParts()).second; };
  other("padding").params.Set("padding", "valid");
  other("strides").params.Set("strides", std::vector<int64_t>{1, 1});
  other("layout").params = taso::cpu::WithLayout(base.params, true);
  other("a tensor parameter").params.Set("table", taso::TensorData::Float({3}, {1, 2, 3}));
  other("operator").op = taso::testing::Op(taso::op_names::kRelu);
  other("input shape").inputs[0].shape = {1, 16, 12, 13};
  other("output shape").outputs[0].shape = {1, 32, 6, 7};
  other("an absent input").inputs.push_back(ConvParts::Absent());
  const auto weight = taso::TensorData::Float({32, 16, 3, 3}, std::vector<float>(32 * 16 * 9, 0.5f));
  other("a constant input").inputs[1].constant = weight.get();
  ConvParts& moved = other("a shape moved from the inputs to the outputs");
  moved.outputs.insert(moved.outputs.begin(), taso::OutputType{.shape = moved.inputs.back().shape});
  moved.inputs.pop_back();
  ConvParts with_bias, without_bias;
  with_bias.inputs.push_back(ConvParts::Input({32}));
  without_bias.inputs.push_back(ConvParts::Absent());
  for (const auto& [what, parts] : others) {
    INFO(what);
    CHECK(parts.Key() != base.Key());
    CHECK(HashOf(parts.Key()) != HashOf(base.Key()));
    CHECK(parts.Key().ToString() != base.Key().ToString());
  }
  CHECK(with_bias.Key() != without_bias.Key());
  CHECK(HashOf(with_bias.Key()) != HashOf(without_bias.Key()));
  ConvParts table, other_table;
  table.params.Set("table", taso::TensorData::Float({3}, {1, 2, 3}));
  other_table.params.Set("table", taso::TensorData::Float({3}, {1, 2, 4}));
  CHECK(table.Key() != other_table.Key());
  CHECK(HashOf(table.Key()) != HashOf(other_table.Key()));
}

// Cache files written by earlier runs are keyed by this text: a change re-measures every
// kernel and changes what the search finds.
TEST_CASE("A cost key's text is the one cost cache files hold") {
  ConvParts conv;
  conv.params.Set("epsilon", 1e-5).Set("group", int64_t{1});
  conv.inputs.push_back(ConvParts::Absent());
  CHECK(conv.Key().ToString() ==
        "Conv2D{activation=\"relu\" epsilon=1e-05 group=1 grouping=\"dense\" padding=\"same\" "
        "strides=[2,2]}[1,16,12,12][32,16,3,3]-->[1,32,6,6]");
  conv.inputs.pop_back();
  CHECK(taso::CostKey(*conv.op, taso::cpu::WithLayout(conv.params, true), conv.inputs, conv.outputs).ToString() ==
        "Conv2D{activation=\"relu\" epsilon=1e-05 group=1 grouping=\"dense\" layout=\"blocked\" padding=\"same\" "
        "strides=[2,2]}[1,16,12,12][32,16,3,3]->[1,32,6,6]");
  const auto kernel = taso::TensorData::Float({32, 16, 3, 3}, std::vector<float>(32 * 16 * 9, 0.5f));
  conv.inputs[1].constant = kernel.get();
  CHECK(conv.Key().ToString() ==
        "Conv2D{activation=\"relu\" epsilon=1e-05 group=1 grouping=\"dense\" padding=\"same\" "
        "strides=[2,2]}[1,16,12,12]c[32,16,3,3]->[1,32,6,6]");
  const std::vector<taso::InputInfo> scalar = {taso::InputInfo{}};
  const std::vector<taso::OutputType> scalar_out = {taso::OutputType{}};
  CHECK(taso::CostKey(*taso::testing::Op(taso::op_names::kRelu), taso::Params(), scalar, scalar_out).ToString() ==
        "Relu{}[]->[]");
}

// Kernels of fixed times (a microsecond per output element) and a reference that runs a
// millisecond longer for each kernel prepared before it: a machine whose speed, as the
// reference shows it, changes between one measurement and the next.
class DriftingReferenceCost : public taso::MeasuredCost {
 public:
  DriftingReferenceCost() : MeasuredCost(nullptr, "drifting") {}
  std::string name() const override { return "drifting"; }

 protected:
  std::optional<KernelRun> PrepareRun(const taso::OpDef& op, const taso::Params&,
                                      absl::Span<const taso::InputInfo> inputs,
                                      absl::Span<const taso::OutputType> outputs) override {
    if (op.name() == taso::op_names::kMatMul)
      return KernelRun([this]() -> absl::StatusOr<double> { return 1e-3 * (1 + prepared_); });
    ++prepared_;
    const double seconds = 1e-6 * static_cast<double>(taso::NumElements(outputs[0].shape));
    return KernelRun([seconds]() -> absl::StatusOr<double> { return seconds; });
  }
  bool IsView(const taso::OpDef&, const taso::Params&, absl::Span<const taso::InputInfo>,
              absl::Span<const taso::OutputType>) const override {
    return false;
  }

 private:
  int prepared_ = 0;
};

TEST_CASE("Nodes measured together compare as timed at one moment; one by one, the drift decides") {
  taso::Graph g;
  auto x = g.AddInput("x", taso::DataType::kFloat32, {1, 1000});
  auto y = g.AddInput("y", taso::DataType::kFloat32, {1, 3000});
  REQUIRE((x.ok() && y.ok()));
  AddOp(g, taso::op_names::kRelu, {*x});
  AddOp(g, taso::op_names::kRelu, {*y});
  const std::vector<taso::CostModel::NodeOf> both = {{&g, 0}, {&g, 1}};
  const auto far = std::chrono::steady_clock::now() + std::chrono::hours(1);

  DriftingReferenceCost apart;
  const double small_apart = apart.NodeCost(g, 0), large_apart = apart.NodeCost(g, 1);
  CHECK(large_apart / small_apart < 2.5);  // three times the work, priced as less

  DriftingReferenceCost together;
  CHECK(together.MeasureTogether(both, far) == std::vector<bool>{true, true});
  CHECK(together.counts().measured == 2);
  CHECK(together.NodeCost(g, 1) / together.NodeCost(g, 0) == Approx(3.0));
  CHECK(together.counts().measured == 2);  // priced from the measurements, none again
  CHECK(together.MeasureTogether(both, far) == std::vector<bool>{true, true});
  CHECK(together.counts().measured == 2);

  // Past the deadline nothing is measured, and what is not known is said so.
  DriftingReferenceCost late;
  CHECK(late.MeasureTogether(both, std::chrono::steady_clock::now()) == std::vector<bool>{false, false});
  CHECK(late.counts().measured == 0);
}

TEST_CASE("One kernel is measured once, however its parameters are spelled") {
  using taso::Params;
  taso::Graph g;
  auto x = g.AddInput("x", taso::DataType::kFloat32, {1, 16, 12, 12});
  auto w = g.AddWeight("w", taso::TensorData::Float({16, 16, 3, 3}, std::vector<float>(16 * 16 * 9, 0.1f)));
  auto b = g.AddWeight("b", taso::TensorData::Float({16}, std::vector<float>(16, 0.5f)));
  REQUIRE((x.ok() && w.ok() && b.ok()));
  // As rules write it, as ONNX does, and both again with a bias.
  const Params rule_form = Params()
                               .Set("strides", std::vector<int64_t>{1, 1})
                               .Set("padding", "same")
                               .Set("grouping", "dense")
                               .Set("activation", "relu");
  const Params onnx_form = Params()
                               .Set("strides", std::vector<int64_t>{1, 1})
                               .Set("pads", std::vector<int64_t>{1, 1, 1, 1})
                               .Set("dilations", std::vector<int64_t>{1, 1})
                               .Set("group", int64_t{1})
                               .Set("activation", "relu");
  AddOp(g, taso::op_names::kConv2D, {*x, *w}, rule_form);
  AddOp(g, taso::op_names::kConv2D, {*x, *w}, onnx_form);
  AddOp(g, taso::op_names::kConv2D, {*x, *w, *b}, rule_form);
  AddOp(g, taso::op_names::kConv2D, {*x, *w, *b}, onnx_form);
  // A pooling window too (rules: a padding mode; ONNX: pads and ceil_mode).
  const Params pool = Params().Set("kernel", std::vector<int64_t>{3, 3}).Set("strides", std::vector<int64_t>{2, 2});
  AddOp(g, taso::op_names::kMaxPool, {*x}, Params(pool).Set("padding", "valid"));
  AddOp(g, taso::op_names::kMaxPool, {*x},
        Params(pool).Set("pads", std::vector<int64_t>{0, 0, 0, 0}).Set("ceil_mode", int64_t{0}));
  // Another kernel: other pads.
  AddOp(g, taso::op_names::kConv2D, {*x, *w}, Params(onnx_form).Set("pads", std::vector<int64_t>{0, 0, 0, 0}));

  taso::CpuCost cost(nullptr);
  for (int pair : {0, 2, 4}) {
    const int start = cost.counts().measured;
    const double first = cost.NodeCost(g, pair);
    const int measured = cost.counts().measured;
    CHECK(measured > start);
    CHECK(cost.NodeCost(g, pair + 1) == first);  // the very measurement, not a second one
    CHECK(cost.counts().measured == measured);
  }
  const int before = cost.counts().measured;
  cost.NodeCost(g, 6);
  CHECK(cost.counts().measured > before);
}

namespace {

// A backend whose kernels take what the test says: each kernel's work times `slowdown`,
// the machine's speed at the moment (the reference product's work is 1e-4 s).
class DriftingBackend : public taso::MeasuredCost {
 public:
  explicit DriftingBackend(std::unique_ptr<taso::CostCache> cache) : MeasuredCost(std::move(cache), "drifting") {}
  std::string name() const override { return "drifting"; }
  double slowdown = 1;
  bool reference_fails = false;  // the reference kernel's runs fail
  // Times `work` seconds of work (at full speed) as the costs are.
  std::optional<double> TimeWork(double work) {
    auto times = TimeLikeCosts({KernelRun([this, work]() -> absl::StatusOr<double> { return work * slowdown; })});
    return times ? std::optional<double>((*times)[0]) : std::nullopt;
  }

 protected:
  std::optional<KernelRun> PrepareRun(const taso::OpDef& op, const taso::Params&, absl::Span<const taso::InputInfo>,
                                      absl::Span<const taso::OutputType> outputs) override {
    const bool reference = op.name() == taso::op_names::kMatMul;
    const double work = reference ? 1e-4 : 1e-9 * static_cast<double>(taso::NumElements(outputs[0].shape));
    return KernelRun([this, work, reference]() -> absl::StatusOr<double> {
      if (reference && reference_fails) return absl::InternalError("the device is gone");
      return work * slowdown;
    });
  }
  bool IsView(const taso::OpDef&, const taso::Params&, absl::Span<const taso::InputInfo>,
              absl::Span<const taso::OutputType>) const override {
    return false;
  }
};

double ReluCost(taso::MeasuredCost& cost, taso::Shape shape) {
  taso::InputInfo x;
  x.dtype = taso::DataType::kFloat32;
  x.shape = shape;
  return cost.Cost(*taso::testing::Op(taso::op_names::kRelu), taso::Params(), std::vector<taso::InputInfo>{x},
                   std::vector<taso::OutputType>{{taso::DataType::kFloat32, shape}});
}

}  // namespace

TEST_CASE("Kernels timed while the machine runs slower cost what they cost at its speed") {
  auto path = std::filesystem::temp_directory_path() / "taso_drift_test.sqlite";
  std::filesystem::remove(path);
  {
    auto cache = taso::CostCache::Open(path.string());
    REQUIRE(cache.ok());
    DriftingBackend cost(*std::move(cache));
    const double first = ReluCost(cost, {1000, 1000});  // 1 ms of work at full speed
    CHECK(first == Approx(1e-3));
    cost.slowdown = 2;  // the same work, timed in a slow minute
    CHECK(ReluCost(cost, {500, 2000}) == Approx(first));
    CHECK(cost.counts().measured == 2);
  }
  {
    // A later run on a machine three times slower reads both from the file at its speed.
    auto cache = taso::CostCache::Open(path.string());
    REQUIRE(cache.ok());
    DriftingBackend cost(*std::move(cache));
    cost.slowdown = 3;
    CHECK(ReluCost(cost, {1000, 1000}) == Approx(3e-3));
    CHECK(ReluCost(cost, {500, 2000}) == Approx(3e-3));
    CHECK(cost.counts().cached == 2);
  }
  std::filesystem::remove(path);
}

TEST_CASE("A run timed apart from the costs is put in the costs' seconds") {
  DriftingBackend cost(nullptr);
  const double relu = ReluCost(cost, {1000, 1000});  // 1 ms of work, the reference timed now
  cost.slowdown = 2;  // a fixed part (ONNX Runtime's call overhead) timed in a slow minute
  const std::optional<double> later = cost.TimeWork(1e-3);
  REQUIRE(later.has_value());
  CHECK(*later == Approx(relu));  // not 2 ms: subtracting it from costs subtracts as much
}

TEST_CASE("A cached time is never read in seconds when the reference kernel cannot be timed") {
  auto path = std::filesystem::temp_directory_path() / "taso_reference_fails_test.sqlite";
  std::filesystem::remove(path);
  {
    auto cache = taso::CostCache::Open(path.string());
    REQUIRE(cache.ok());
    DriftingBackend cost(*std::move(cache));
    ReluCost(cost, {1000, 1000});
    REQUIRE(cost.status().ok());
  }
  auto cache = taso::CostCache::Open(path.string());
  REQUIRE(cache.ok());
  DriftingBackend cost(*std::move(cache));
  cost.reference_fails = true;
  const double estimate = ReluCost(cost, {1000, 1000});
  CHECK(estimate != Approx(10.0));  // the cached multiple (10 references) read as seconds
  CHECK(cost.counts().cached == 0);
  CHECK(cost.counts().estimated == 1);
  CHECK_THAT(std::string(cost.status().message()),
             Catch::Contains("reference") && Catch::Contains("the device is gone"));
  std::filesystem::remove(path);
}

TEST_CASE("A kernel registry refuses a name registered twice and a name of no operator") {
  CHECK(taso::cpu::ValidateKernels().ok());
  const std::string known(taso::OpRegistry::Global().All().front()->name());
  const taso::OpRegistry& ops = taso::OpRegistry::Global();

  taso::KernelRegistry<int> twice("test kernel");
  twice.Register(known, std::make_unique<int>(1));
  twice.Register(known, std::make_unique<int>(2));
  CHECK_THAT(std::string(twice.Validate(ops).message()), Catch::Equals("test kernel registered twice: " + known));

  taso::KernelRegistry<int> misspelled("test kernel");
  misspelled.Register(known, std::make_unique<int>(1));
  misspelled.Register("NoSuchOperator", std::make_unique<int>(2));
  CHECK_THAT(std::string(misspelled.Validate(ops).message()),
             Catch::Equals("test kernel for no operator: NoSuchOperator"));

  taso::KernelRegistry<int> good("test kernel");
  good.Register(known, std::make_unique<int>(1));
  CHECK(good.Validate(ops).ok());
  REQUIRE(good.Find(known) != nullptr);
  CHECK(*good.Find(known) == 1);
}

TEST_CASE("The first lookup in a broken kernel registry ends the program with exit status 70") {
  taso::KernelRegistry<int> misspelled("test kernel");
  misspelled.Register("NoSuchOperator", std::make_unique<int>(1));
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::freopen("/dev/null", "w", stderr);
    misspelled.Find("NoSuchOperator");
    std::_Exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 70);
}
