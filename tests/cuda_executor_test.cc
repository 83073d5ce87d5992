// The cuda backend (cuDNN, cuBLAS and our CUDA kernels) against the reference executor,
// and its measured costs. They run where a GPU is usable; elsewhere each says so and
// passes (cli_test.cc checks the error the commands give there).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include "models/models.h"

#include "taso/backends/backends.h"
#include "taso/backends/cost_cache.h"
#include "taso/backends/cpu_executor.h"
#include "taso/backends/cuda_cost.h"
#include "taso/backends/cuda_executor.h"
#include "taso/ir/ops/names.h"
#include "test_util.h"

using namespace taso;

namespace {

bool GpuUsable() {
  const BackendInfo cuda = AvailableBackends()[1];
  if (!cuda.usable) WARN("cuda backend not usable here, test not run: " << cuda.detail);
  return cuda.usable;
}

void ExpectSameAsReference(const Graph& g, uint64_t seed, bool all_on_gpu) {
  auto executor = MakeCudaExecutor(g);
  REQUIRE(executor.ok());
  if (all_on_gpu) CHECK((*executor)->num_reference() == 0);
  CHECK((*executor)->num_kernels() > (*executor)->num_reference());
  for (uint64_t s : {seed, seed + 1}) {  // twice: nothing is left over from a run
    const TensorMap inputs = RandomInputs(g, s);
    auto expected = RunReference(g, inputs);
    auto got = (*executor)->Run(inputs);
    REQUIRE(expected.ok());
    REQUIRE(got.ok());
    CHECK(RelativeDifference(*expected, *got) <= 1e-4);
  }
}

// A convolution (with its ReLU) and a max pooling after it.
Graph ConvThenPool() {
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {1, 16, 28, 28});
  REQUIRE(x.ok());
  const ValueId conv = testing::AddOp(g, op_names::kConv2D, {*x, testing::AddWeight(g, "w", {32, 16, 3, 3}, 1)}, "conv",
                                      Params().Set("padding", "same").Set("activation", "relu"));
  testing::AddOp(g, op_names::kMaxPool, {conv}, "pool",
                 Params().Set("kernel", std::vector<int64_t>{2, 2}).Set("strides", std::vector<int64_t>{2, 2}));
  return g;
}

}  // namespace

TEST_CASE("The cuda executor times each operator of a run apart, and computes the same after") {
  if (!GpuUsable()) return;
  const Graph g = ConvThenPool();
  auto executor = MakeCudaExecutor(g);
  REQUIRE(executor.ok());
  const TensorMap inputs = RandomInputs(g, 3);
  REQUIRE((*executor)->Run(inputs).ok());
  auto profile = (*executor)->ProfileByOperator(5);
  REQUIRE(profile.ok());
  REQUIRE(profile->size() == 2);
  for (const KernelExecutor::OperatorTime& t : *profile) {
    CHECK((t.op == op_names::kConv2D || t.op == op_names::kMaxPool));
    CHECK(t.nodes == 1);
    CHECK(t.reference == 0);
    CHECK(t.seconds > 0);
  }
  auto expected = RunReference(g, inputs);
  auto got = (*executor)->Run(inputs);
  REQUIRE(expected.ok());
  REQUIRE(got.ok());
  CHECK(RelativeDifference(*expected, *got) <= 1e-4);
}

TEST_CASE("The cuda backend keeps the algorithm cuDNN found for a convolution in the cost cache file") {
  if (!GpuUsable()) return;
  REQUIRE(MakeCudaExecutor(ConvThenPool()).ok());
  auto device = CudaChoicesDevice();
  auto cache = CostCache::Open(DefaultCostCachePath());
  REQUIRE(device.ok());
  REQUIRE(cache.ok());
  // The convolution as cuDNN reads it: input, weights, pads, strides, dilations.
  const std::optional<double> kept = (*cache)->Lookup(*device, "conv 1,16,28,28,32,16,3,3,1,1,1,1,1,1");
  REQUIRE(kept.has_value());
  CHECK(*kept >= 0);
}

TEST_CASE("The cuda executor computes what the reference executor computes on every benchmark model") {
  if (!GpuUsable()) return;
  for (const auto& info : models::AllModels()) {
    SECTION(info.name) {
      auto model = info.build({.image_size = info.name == "inception_v3" ? 75 : 32, .layers = 1});
      REQUIRE(model.ok());
      ExpectSameAsReference(model->graph, 5, false);
      auto executor = MakeCudaExecutor(model->graph);
      REQUIRE(executor.ok());
      REQUIRE((*executor)->Run(RandomInputs(model->graph, 1)).ok());
      auto seconds = (*executor)->MedianSeconds(3);
      REQUIRE(seconds.ok());
      CHECK(*seconds > 0);
    }
  }
}

// One graph with every operator the cuda backend has a kernel for, in the cases the
// kernels treat apart.
Graph EveryKernelGraph() {
  using testing::AddOp;
  using testing::AddWeight;
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {2, 8, 11, 11});
  auto m = g.AddInput("m", DataType::kFloat32, {3, 5, 6});
  auto a = g.AddInput("a", DataType::kFloat32, {6, 5});
  REQUIRE((x.ok() && m.ok() && a.ok()));
  const Params relu = Params().Set("activation", "relu");
  const Params same = Params().Set("padding", "same");
  // Convolutions: grouped with bias and relu, depthwise, dense without either, and at
  // stride 2 with unequal "same" pads on an odd size.
  const ValueId grouped =
      AddOp(g, op_names::kConv2D, {*x, AddWeight(g, "wg", {8, 2, 3, 3}, 1), AddWeight(g, "bg", {8}, 2)}, "grouped",
            Params(relu).Set("pads", std::vector<int64_t>{1, 1, 1, 1}));
  const ValueId depthwise =
      AddOp(g, op_names::kConv2D, {grouped, AddWeight(g, "wd", {8, 1, 3, 3}, 3)}, "depthwise", same);
  const ValueId dense =
      AddOp(g, op_names::kConv2D, {depthwise, AddWeight(g, "w1", {6, 8, 1, 1}, 4), AddWeight(g, "b1", {6}, 5)}, "dense",
            Params());
  const ValueId strided =
      AddOp(g, op_names::kConv2D, {*x, AddWeight(g, "ws", {4, 8, 4, 4}, 6)}, "strided",
            Params(relu).Set("strides", std::vector<int64_t>{2, 2}).Set("pads", std::vector<int64_t>{1, 1, 2, 2}));
  // Pooling: ceil mode, padding counted and not, global.
  const ValueId max = AddOp(g, op_names::kMaxPool, {dense}, "max",
                            Params()
                                .Set("kernel", std::vector<int64_t>{3, 3})
                                .Set("strides", std::vector<int64_t>{2, 2})
                                .Set("ceil_mode", int64_t{1}));
  const ValueId avg_in =
      AddOp(g, op_names::kAveragePool, {dense}, "avg_in",
            Params(same).Set("kernel", std::vector<int64_t>{3, 3}).Set("count_include_pad", int64_t{1}));
  const ValueId avg_ex =
      AddOp(g, op_names::kAveragePool, {dense}, "avg_ex", Params(same).Set("kernel", std::vector<int64_t>{3, 3}));
  const ValueId global = AddOp(g, op_names::kGlobalAveragePool, {strided}, "global");
  // Means over trailing dimensions, the axes a parameter, and an input as well (opset 18).
  const ValueId mean_hw = AddOp(g, op_names::kReduceMean, {dense}, "mean_hw",
                                Params().Set("axes", std::vector<int64_t>{2, 3}).Set("keepdims", int64_t{1}));
  auto mean_axes = g.AddWeight("mean_axes", TensorData::Int64({1}, {-1}));
  REQUIRE(mean_axes.ok());
  const ValueId mean_last = AddOp(g, op_names::kReduceMean, {*m, *mean_axes}, "mean_last",
                                  Params().Set("axes", std::vector<int64_t>{-1}).Set("keepdims", int64_t{0}));
  // Element-wise, with broadcasting.
  const ValueId scale = AddWeight(g, "scale", {6, 1, 1}, 7);
  const ValueId sum = AddOp(g, op_names::kAdd, {AddOp(g, op_names::kMul, {avg_in, scale}, "scaled"), avg_ex}, "sum");
  const ValueId mixed =
      AddOp(g, op_names::kDiv,
            {AddOp(g, op_names::kSub, {sum, AddOp(g, op_names::kTanh, {avg_ex}, "tanh")}, "diff"),
             AddOp(g, op_names::kAdd,
                   {AddOp(g, op_names::kSigmoid, {sum}, "sig"), AddOp(g, op_names::kRelu, {scale}, "scale+")}, "pos")},
            "mixed");
  const ValueId erf =
      AddOp(g, op_names::kErf, {AddOp(g, op_names::kSqrt, {AddOp(g, op_names::kRelu, {mixed}, "r")}, "sqrt")}, "erf");
  const ValueId hard = AddOp(g, op_names::kHardSigmoid,
                             {AddOp(g, op_names::kHardSwish, {AddOp(g, op_names::kGelu, {mixed}, "gelu")}, "hswish")},
                             "hsig", Params().Set("alpha", 0.3).Set("beta", 0.4));
  // Data movement and normalization.
  const ValueId cat = AddOp(g, op_names::kConcat, {erf, sum}, "cat", Params().Set("axis", int64_t{1}));
  auto rows = g.AddNode(testing::Op(op_names::kSplit),
                        Params().Set("axis", int64_t{2}).Set("sizes", std::vector<int64_t>{4, 7}), {cat}, "rows",
                        {"top", "bottom"});
  REQUIRE(rows.ok());
  const ValueId bn =
      AddOp(g, op_names::kBatchNormalization,
            {(*rows)[1], AddWeight(g, "bn_s", {12}, 8), AddWeight(g, "bn_b", {12}, 9), AddWeight(g, "bn_m", {12}, 10),
             AddOp(g, op_names::kRelu, {AddWeight(g, "bn_v", {12}, 11)}, "bn_v+")},
            "bn", Params().Set("epsilon", 1e-3));
  const ValueId soft = AddOp(g, op_names::kSoftmax, {(*rows)[0]}, "soft", Params().Set("axis", int64_t{1}));
  // Clip with both bounds (ReLU6), with the lower alone and with the upper alone.
  auto lower = g.AddWeight("clip_lo", TensorData::Float({}, {-0.25f}));
  auto upper = g.AddWeight("clip_hi", TensorData::Float({}, {0.5f}));
  REQUIRE((lower.ok() && upper.ok()));
  const ValueId clip_low = AddOp(g, op_names::kClip, {mixed, *lower}, "clip_low");
  const ValueId clip = AddOp(g, op_names::kClip, {hard, *lower, *upper}, "clip");
  const ValueId clip_high = AddOp(g, op_names::kClip, {mixed, kNoValue, *upper}, "clip_high");
  // Slices: the packed projection's middle third, and backwards with steps over two axes.
  auto ints = [&](const std::string& name, std::vector<int64_t> v) {
    const int64_t n = static_cast<int64_t>(v.size());
    auto id = g.AddWeight(name, TensorData::Int64({n}, std::move(v)));
    REQUIRE(id.ok());
    return *id;
  };
  const ValueId third =
      AddOp(g, op_names::kSlice, {*m, ints("t_s", {2}), ints("t_e", {4}), ints("t_a", {-1})}, "third");
  const ValueId backwards =
      AddOp(g, op_names::kSlice,
            {*m, ints("b_s", {1, -1}), ints("b_e", {4, -100}), ints("b_a", {1, 2}), ints("b_k", {2, -2})}, "backwards");
  // Layer normalization over the last axis with a bias, and over two axes without.
  const ValueId norm_last = AddOp(g, op_names::kLayerNormalization,
                                  {*m, AddWeight(g, "ln_s", {6}, 17), AddWeight(g, "ln_b", {6}, 18)}, "norm_last");
  const ValueId tr =
      AddOp(g, op_names::kTranspose, {soft}, "tr", Params().Set("perm", std::vector<int64_t>{0, 2, 3, 1}));
  // Matrix products: batched, a shared matrix, Gemm with transposes and a bias (on a
  // run-time input: weight-only nodes are folded before the run).
  const ValueId batched = AddOp(g, op_names::kMatMul, {*m, AddWeight(g, "mb", {3, 6, 4}, 12)}, "batched");
  const ValueId shared = AddOp(g, op_names::kMatMul, {*m, AddWeight(g, "ms", {6, 2}, 13)}, "shared");
  const ValueId gemm = AddOp(g, op_names::kGemm, {*a, AddWeight(g, "gb", {7, 6}, 15), AddWeight(g, "gc", {7}, 16)},
                             "gemm", Params().Set("transA", int64_t{1}).Set("transB", int64_t{1}).Set("alpha", 0.5));
  const ValueId norm_rows = AddOp(g, op_names::kLayerNormalization, {batched, AddWeight(g, "ln_s2", {5, 4}, 19)},
                                  "norm_rows", Params().Set("axis", int64_t{1}).Set("epsilon", 1e-3));
  for (ValueId v : {max, global, mean_hw, mean_last, bn, tr, batched, shared, gemm, strided, clip_low, clip, clip_high,
                    norm_last, norm_rows, third, backwards})
    REQUIRE(g.AddOutput(v).ok());
  return g;
}

TEST_CASE("Every cuda kernel computes its operator as the reference kernel does") {
  if (!GpuUsable()) return;
  ExpectSameAsReference(EveryKernelGraph(), 1, true);
}

TEST_CASE("The graph of every cuda kernel runs on the cpu executor as on the reference one") {
  // Checks the graph above where no GPU is (and the cpu kernels on the same cases).
  const Graph g = EveryKernelGraph();
  auto executor = CpuExecutor::Create(g);
  REQUIRE(executor.ok());
  const TensorMap inputs = RandomInputs(g, 1);
  auto expected = RunReference(g, inputs);
  auto got = (*executor)->Run(inputs);
  REQUIRE(expected.ok());
  REQUIRE(got.ok());
  for (const auto& [name, t] : *expected) {
    INFO(name);
    CHECK(RelativeDifference({{name, t}}, {{name, got->at(name)}}) <= 1e-4);
    CHECK(std::all_of(t.data.begin(), t.data.end(), [](float v) { return std::isfinite(v); }));
  }
}

TEST_CASE("The cuda backend measures kernel costs once and takes them from the cache after") {
  if (!GpuUsable()) return;
  auto dir = testing::TempDir("cuda_cost_cache");
  const std::string path = (dir / "costs.sqlite").string();
  const Graph g = ConvThenPool();
  for (int round = 0; round < 2; ++round) {
    auto cache = CostCache::Open(path);
    REQUIRE(cache.ok());
    auto cost = MakeCudaCost(std::move(*cache));
    REQUIRE(cost.ok());
    for (NodeId n = 0; n < g.num_nodes(); ++n) CHECK((*cost)->NodeCost(g, n) > 0);
    CHECK((*cost)->counts().estimated == 0);
    CHECK((*cost)->counts().measured == (round == 0 ? 2 : 0));
    CHECK((*cost)->counts().cached == (round == 0 ? 0 : 2));
  }
}

TEST_CASE("The cuda backend measures a kernel whose node has a constant input of another type") {
  onnx::ModelProto m = testing::NewModel(18);  // ReduceMean's axes are an input from opset 18
  testing::AddInput(m, "x", {4, 64});
  testing::AddInt64Init(m, "axes", {-1});
  testing::SetIntAttr(testing::AddNode(m, "ReduceMean", {"x", "axes"}, {"y"}, "mean"), "keepdims", 1);
  testing::AddOutput(m, "y");
  const OnnxModel model = testing::ImportFolded(m);
  std::vector<NodeId> means;
  for (NodeId n = 0; n < model.graph.num_nodes(); ++n)
    if (model.graph.node(n).op->name() == op_names::kReduceMean) means.push_back(n);
  REQUIRE(means.size() == 1);
  const std::vector<InputInfo> inputs = model.graph.InputInfos(model.graph.node(means[0]));
  REQUIRE(inputs.size() == 2);
  CHECK((inputs[1].present && inputs[1].dtype == DataType::kInt64));  // what the case is about
  if (!GpuUsable()) return;
  auto cost = MakeCudaCost(nullptr);
  REQUIRE(cost.ok());
  CHECK((*cost)->NodeCost(model.graph, means[0]) > 0);
  CHECK((*cost)->counts().measured == 1);
  CHECK((*cost)->counts().estimated == 0);
}
