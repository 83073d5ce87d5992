// The cpu executor (oneDNN) against the reference executor: every benchmark model, at a
// reduced size, computes the same outputs; bad inputs are refused with a clear error.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "backends/cpu/cpu_kernel.h"
#include "models/models.h"
#include "taso/backends/cpu_executor.h"
#include "taso/backends/kernel_executor.h"
#include "taso/ir/ops/names.h"
#include "taso/onnx/onnx_io.h"
#include "test_util.h"

using namespace taso;

namespace {

void ExpectClose(const TensorMap& expected, const TensorMap& got) { CHECK(RelativeDifference(expected, got) <= 1e-4); }

}  // namespace

TEST_CASE("The cpu executor computes what the reference executor computes on every benchmark model") {
  for (const auto& info : models::AllModels()) {
    SECTION(info.name) {
      auto model = info.build({.image_size = info.name == "inception_v3" ? 75 : 32, .layers = 1});
      REQUIRE(model.ok());
      auto executor = CpuExecutor::Create(model->graph);
      REQUIRE(executor.ok());
      CHECK((*executor)->num_kernels() > (*executor)->num_reference());
      const TensorMap inputs = RandomInputs(model->graph, 5);
      auto expected = RunReference(model->graph, inputs);
      REQUIRE(expected.ok());
      auto got = (*executor)->Run(inputs);
      REQUIRE(got.ok());
      ExpectClose(*expected, *got);
      // Runs again on other inputs: nothing is left over from the first run.
      const TensorMap other = RandomInputs(model->graph, 6);
      auto expected2 = RunReference(model->graph, other);
      auto got2 = (*executor)->Run(other);
      REQUIRE(expected2.ok());
      REQUIRE(got2.ok());
      ExpectClose(*expected2, *got2);
      auto seconds = (*executor)->MedianSeconds(1);
      REQUIRE(seconds.ok());
      CHECK(*seconds > 0);
    }
  }
}

TEST_CASE("The cpu executor runs grouped and depthwise convolutions, and splits along channels") {
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {1, 8, 9, 9});
  REQUIRE(x.ok());
  Params conv;
  conv.Set("pads", std::vector<int64_t>{1, 1, 1, 1}).Set("activation", "relu");
  const ValueId grouped = testing::AddOp(
      g, op_names::kConv2D, {*x, testing::AddWeight(g, "wg", {8, 2, 3, 3}, 1), testing::AddWeight(g, "bg", {8}, 2)},
      "grouped", conv);
  const ValueId depthwise =
      testing::AddOp(g, op_names::kConv2D, {grouped, testing::AddWeight(g, "wd", {8, 1, 3, 3}, 3)}, "depthwise", conv);
  auto pieces =
      g.AddNode(testing::Op(op_names::kSplit), Params().Set("axis", 1).Set("sizes", std::vector<int64_t>{3, 5}),
                {depthwise}, "split", {"a", "b"});
  REQUIRE(pieces.ok());
  REQUIRE(g.AddOutput((*pieces)[0]).ok());
  REQUIRE(g.AddOutput((*pieces)[1]).ok());
  auto executor = CpuExecutor::Create(g);
  REQUIRE(executor.ok());
  CHECK((*executor)->num_reference() == 0);
  const TensorMap inputs = RandomInputs(g, 1);
  auto got = (*executor)->Run(inputs);
  auto expected = RunReference(g, inputs);
  REQUIRE(got.ok());
  REQUIRE(expected.ok());
  ExpectClose(*expected, *got);
}

TEST_CASE("The cpu executor multiplies by a weight matrix (packed once), a merged weight and an activation matrix") {
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {3, 5});
  auto y = g.AddInput("y", DataType::kFloat32, {5, 7});
  REQUIRE((x.ok() && y.ok()));
  const ValueId w = testing::AddWeight(g, "w", {5, 7}, 1);
  const ValueId by_weight = testing::AddOp(g, op_names::kMatMul, {*x, w}, "by_weight");
  // Two weights concatenated, as a merge of matrix products writes it: folded to one.
  const ValueId merged = testing::AddOp(g, op_names::kConcat, {w, testing::AddWeight(g, "v", {5, 4}, 2)}, "merged",
                                        Params().Set("axis", int64_t{1}));
  const ValueId by_u = testing::AddOp(g, op_names::kMatMul, {by_weight, testing::AddWeight(g, "u", {7, 5}, 3)}, "by_u");
  const ValueId by_both = testing::AddOp(g, op_names::kMatMul, {by_u, merged}, "by_both");
  const ValueId by_input = testing::AddOp(g, op_names::kMatMul, {*x, *y}, "by_input");
  REQUIRE(g.AddOutput(by_both).ok());
  REQUIRE(g.AddOutput(by_input).ok());
  auto executor = CpuExecutor::Create(g);
  REQUIRE(executor.ok());
  CHECK((*executor)->num_reference() == 0);
  for (uint64_t seed : {1, 2}) {  // a second run on new inputs: the packed weights stay right
    const TensorMap inputs = RandomInputs(g, seed);
    auto got = (*executor)->Run(inputs);
    auto expected = RunReference(g, inputs);
    REQUIRE(got.ok());
    REQUIRE(expected.ok());
    ExpectClose(*expected, *got);
  }
}

// PyTorch's linear layers on rank-3 activations (every transformer): the weight shared by
// the batch, and a batch of one matrix (ONNX broadcasting) as well.
TEST_CASE("The cpu executor multiplies a batch of rows by one matrix on oneDNN") {
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {4, 3, 6});
  REQUIRE(x.ok());
  const ValueId linear = testing::AddOp(g, op_names::kMatMul, {*x, testing::AddWeight(g, "w", {6, 5}, 1)}, "linear");
  const ValueId batch_of_one =
      testing::AddOp(g, op_names::kMatMul, {linear, testing::AddWeight(g, "v", {1, 5, 2}, 2)}, "batch_of_one");
  REQUIRE(g.AddOutput(batch_of_one).ok());
  auto executor = CpuExecutor::Create(g);
  REQUIRE(executor.ok());
  CHECK((*executor)->num_reference() == 0);
  const TensorMap inputs = RandomInputs(g, 3);
  auto got = (*executor)->Run(inputs);
  auto expected = RunReference(g, inputs);
  REQUIRE(got.ok());
  REQUIRE(expected.ok());
  CHECK(got->at("batch_of_one").shape == Shape{4, 3, 2});
  ExpectClose(*expected, *got);
}

namespace {

ValueId Ints(Graph& g, const std::string& name, std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  auto id = g.AddWeight(name, TensorData::Int64({n}, std::move(v)));
  REQUIRE(id.ok());
  return *id;
}

}  // namespace

TEST_CASE("Slices run on oneDNN: along the last axis, over two axes, with steps; backwards on the reference") {
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {2, 5, 12});
  REQUIRE(x.ok());
  auto slice = [&](const std::string& name, std::vector<int64_t> starts, std::vector<int64_t> ends,
                   std::vector<int64_t> axes, std::vector<int64_t> steps) {
    const ValueId v = testing::AddOp(g, op_names::kSlice,
                                     {*x, Ints(g, name + "_s", starts), Ints(g, name + "_e", ends),
                                      Ints(g, name + "_a", axes), Ints(g, name + "_k", steps)},
                                     name);
    REQUIRE(g.AddOutput(v).ok());
  };
  slice("key", {4}, {8}, {-1}, {1});                  // the packed projection's middle third
  slice("corner", {1, 3}, {4, 100}, {1, 2}, {1, 1});  // an end past the dimension, clamped
  slice("strided", {1, 1}, {5, 12}, {1, 2}, {1, 3});
  slice("backwards", {-1}, {-100}, {2}, {-2});
  auto executor = CpuExecutor::Create(g);
  REQUIRE(executor.ok());
  CHECK((*executor)->num_kernels() == 3);
  CHECK((*executor)->num_reference() == 1);
  const TensorMap inputs = RandomInputs(g, 4);
  auto got = (*executor)->Run(inputs);
  auto expected = RunReference(g, inputs);
  REQUIRE(got.ok());
  REQUIRE(expected.ok());
  CHECK(got->at("corner").shape == Shape{2, 3, 9});
  CHECK(got->at("strided").shape == Shape{2, 4, 4});
  for (const auto& [name, t] : *expected) {
    INFO(name);
    CHECK(got->at(name).data == t.data);  // copies: exactly the same values
  }
}

TEST_CASE("The cpu executor reads weights where the graph holds them, on oneDNN and on reference kernels") {
  // x [1, 8, 4096] times a batch of one weight matrix [1, 4096, 4096] (64 MiB), which oneDNN
  // reads as it lies (not packed: three dimensions); then an Einsum, which has no oneDNN
  // kernel, by a second weight.
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {1, 8, 4096});
  REQUIRE(x.ok());
  const ValueId y = testing::AddOp(g, op_names::kMatMul, {*x, testing::AddWeight(g, "w", {1, 4096, 4096}, 1)}, "y");
  const ValueId z = testing::AddOp(g, op_names::kEinsum, {y, testing::AddWeight(g, "v", {4096, 16}, 2)}, "z",
                                   Params().Set("equation", std::string("bij,jk->bik")));
  REQUIRE(g.AddOutput(z).ok());
  const int64_t before = testing::PrivateMemoryBytes();
  auto executor = CpuExecutor::Create(g);
  REQUIRE(executor.ok());
  CHECK(testing::PrivateMemoryBytes() - before < (int64_t{32} << 20));  // not the weight's 64 MiB again
  CHECK((*executor)->num_reference() == 1);
  const TensorMap inputs = RandomInputs(g, 3);
  auto got = (*executor)->Run(inputs);
  auto expected = RunReference(g, inputs);
  REQUIRE(got.ok());
  REQUIRE(expected.ok());
  ExpectClose(*expected, *got);
}

TEST_CASE("A dense convolution with relu, in plain layout, computes relu of the convolution") {
  // oneDNN runs plain dense convolutions as a gemm; their relu is then a separate eltwise
  // primitive in place (see src/backends/cpu/kernels/conv2d.cc), with and without a bias.
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {1, 3, 20, 20});
  REQUIRE(x.ok());
  Params conv;
  conv.Set("strides", std::vector<int64_t>{2, 2}).Set("activation", "relu");
  const ValueId biased = testing::AddOp(
      g, op_names::kConv2D, {*x, testing::AddWeight(g, "w1", {16, 3, 3, 3}, 1), testing::AddWeight(g, "b1", {16}, 2)},
      "biased", conv);
  conv.Set("strides", std::vector<int64_t>{1, 1}).Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  const ValueId plain =
      testing::AddOp(g, op_names::kConv2D, {biased, testing::AddWeight(g, "w2", {8, 16, 3, 3}, 3)}, "plain", conv);
  REQUIRE(g.AddOutput(biased).ok());
  REQUIRE(g.AddOutput(plain).ok());
  auto executor = CpuExecutor::Create(g);
  REQUIRE(executor.ok());
  CHECK((*executor)->num_reference() == 0);
  const TensorMap inputs = RandomInputs(g, 4);
  auto got = (*executor)->Run(inputs);
  auto expected = RunReference(g, inputs);
  REQUIRE(got.ok());
  REQUIRE(expected.ok());
  ExpectClose(*expected, *got);
  // The relu did something: some outputs are zero, none is negative.
  for (const auto& [name, t] : *got) {
    CHECK(*std::min_element(t.data.begin(), t.data.end()) == 0.0f);
    CHECK(*std::max_element(t.data.begin(), t.data.end()) > 0.0f);
  }
}

TEST_CASE("Erf and Clip run on cpu kernels: erf to 5e-7 (relatively near 0), NaN kept, and clip to constant bounds") {
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {1, 12007});
  REQUIRE(x.ok());
  const ValueId erf = testing::AddOp(g, op_names::kErf, {*x}, "erf");
  auto lo = g.AddWeight("lo", TensorData::Float({1}, {-0.5f}));
  auto hi = g.AddWeight("hi", TensorData::Float({1}, {0.75f}));
  REQUIRE((lo.ok() && hi.ok()));
  const ValueId clip = testing::AddOp(g, op_names::kClip, {*x, *lo, *hi}, "clip");
  REQUIRE(g.AddOutput(erf).ok());
  REQUIRE(g.AddOutput(clip).ok());
  auto executor = CpuExecutor::Create(g);
  REQUIRE(executor.ok());
  CHECK((*executor)->num_reference() == 0);

  Tensor<float> in({1, 12007});
  for (int i = 0; i < 12000; ++i) in.data[i] = -6.0f + 12.0f * static_cast<float>(i) / 11999.0f;
  const float specials[] = {0.0f,
                            -0.0f,
                            1e-30f,
                            -3e-6f,
                            0.4999f,
                            std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()};
  std::copy(std::begin(specials), std::end(specials), in.data.begin() + 12000);
  auto got = (*executor)->Run({{"x", in}});
  REQUIRE(got.ok());
  const std::vector<float>& e = got->at("erf").data;
  const std::vector<float>& c = got->at("clip").data;
  for (size_t i = 0; i < in.data.size(); ++i) {
    const float v = in.data[i];
    if (std::isnan(v)) {
      CHECK(std::isnan(e[i]));
      continue;
    }
    const double exact = std::erf(static_cast<double>(v));
    INFO("erf(" << v << ") = " << e[i] << ", exact " << exact);
    CHECK(std::fabs(e[i] - exact) <= 5e-7);
    if (std::fabs(v) < 0.5f) CHECK(std::fabs(e[i] - exact) <= 2e-6 * std::fabs(exact));
    CHECK(std::signbit(e[i]) == std::signbit(v));
    CHECK(c[i] == std::min(std::max(v, -0.5f), 0.75f));
  }
}

TEST_CASE("HardSwish and HardSigmoid run on cpu kernels and compute their piecewise-linear functions") {
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {1, 1601});
  REQUIRE(x.ok());
  REQUIRE(g.AddOutput(testing::AddOp(g, op_names::kHardSwish, {*x}, "swish")).ok());
  REQUIRE(g.AddOutput(
               testing::AddOp(g, op_names::kHardSigmoid, {*x}, "sigmoid", Params().Set("alpha", 0.25).Set("beta", 0.4)))
              .ok());
  auto executor = CpuExecutor::Create(g);
  REQUIRE(executor.ok());
  CHECK((*executor)->num_reference() == 0);
  Tensor<float> in({1, 1601});
  for (int i = 0; i < 1601; ++i) in.data[i] = -8.0f + 0.01f * static_cast<float>(i);  // the kinks at -3, 3, -1.6, 2.4
  auto got = (*executor)->Run({{"x", in}});
  REQUIRE(got.ok());
  for (size_t i = 0; i < in.data.size(); ++i) {
    const double v = in.data[i];
    INFO("x = " << v);
    CHECK(got->at("swish").data[i] == Approx(v * std::clamp(v / 6 + 0.5, 0.0, 1.0)).margin(1e-6));
    CHECK(got->at("sigmoid").data[i] == Approx(std::clamp(0.25 * v + 0.4, 0.0, 1.0)).margin(1e-6));
  }
  // The reference kernels compute the same.
  auto expected = RunReference(g, {{"x", in}});
  REQUIRE(expected.ok());
  CHECK(RelativeDifference(*expected, *got) <= 1e-6);
}

TEST_CASE("Binary operators whose first operand broadcasts run on oneDNN's fast kernels and compute a op b") {
  // A squeeze-excitation block's scale [1, C, 1, 1] times its feature map [1, C, H, W].
  const Shape scale_shape = {1, 8, 1, 1}, map_shape = {1, 8, 5, 5};
  Graph g;
  auto s = g.AddInput("s", DataType::kFloat32, scale_shape);
  auto x = g.AddInput("x", DataType::kFloat32, map_shape);
  REQUIRE((s.ok() && x.ok()));
  const char* ops[] = {op_names::kAdd, op_names::kSub, op_names::kMul, op_names::kDiv};
  for (const char* op : ops) REQUIRE(g.AddOutput(testing::AddOp(g, op, {*s, *x}, op)).ok());
  REQUIRE(g.AddOutput(testing::AddOp(g, op_names::kSub, {*x, *s}, "x_minus_s")).ok());
  auto executor = CpuExecutor::Create(g);
  REQUIRE(executor.ok());
  CHECK((*executor)->num_reference() == 0);
  const TensorMap inputs = RandomInputs(g, 3);
  auto got = (*executor)->Run(inputs);
  REQUIRE(got.ok());
  const std::vector<float>&sv = inputs.at("s").data, &xv = inputs.at("x").data;
  for (size_t i = 0; i < xv.size(); ++i) {
    const float a = sv[i / 25], b = xv[i];
    CHECK(got->at(op_names::kAdd).data[i] == a + b);
    CHECK(got->at(op_names::kSub).data[i] == a - b);
    CHECK(got->at(op_names::kMul).data[i] == a * b);
    CHECK(got->at(op_names::kDiv).data[i] == Approx(a / b).epsilon(1e-6));
    CHECK(got->at("x_minus_s").data[i] == b - a);
  }
  // Division cannot swap its operands: it alone may take oneDNN's reference loop.
  for (const char* op : {op_names::kAdd, op_names::kSub, op_names::kMul}) {
    InputInfo first, second;
    first.present = second.present = true;
    first.shape = scale_shape;
    second.shape = map_shape;
    auto prepared =
        cpu::FindKernel(op)->Prepare(Params(), {first, second}, {OutputType{DataType::kFloat32, map_shape}});
    REQUIRE(prepared.ok());
    auto* run = dynamic_cast<cpu::PrimitiveRun*>(prepared->get());
    REQUIRE(run != nullptr);
    for (const std::string& impl : run->Implementations()) {
      INFO(op << " runs " << impl);
      CHECK(impl.rfind("ref", 0) != 0);
    }
  }
}

TEST_CASE("BERT read back from its file runs every node on oneDNN, ReduceMean's axes an input since opset 18") {
  auto built = models::BuildModel("bert", {.layers = 1});
  REQUIRE(built.ok());
  REQUIRE(built->opset >= 18);
  auto proto = ExportOnnx(*built);
  REQUIRE(proto.ok());
  auto model = ImportOnnx(*proto);
  REQUIRE(model.ok());
  auto executor = CpuExecutor::Create(model->graph);
  REQUIRE(executor.ok());
  CHECK((*executor)->num_reference() == 0);
  const TensorMap inputs = RandomInputs(model->graph, 3);
  auto expected = RunReference(model->graph, inputs);
  REQUIRE(expected.ok());
  auto got = (*executor)->Run(inputs);
  REQUIRE(got.ok());
  ExpectClose(*expected, *got);
}

TEST_CASE("The cpu executor's profile counts each operator's nodes and the reference ones, slowest first") {
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {64, 256});
  REQUIRE(x.ok());
  const ValueId a = testing::AddOp(g, op_names::kMatMul, {*x, testing::AddWeight(g, "w1", {256, 256}, 1)}, "a");
  const ValueId b = testing::AddOp(g, op_names::kMatMul, {a, testing::AddWeight(g, "w2", {256, 256}, 2)}, "b");
  const ValueId e = testing::AddOp(g, op_names::kErf, {b}, "e");
  auto pads = g.AddWeight("pads", TensorData::Int64({4}, {0, 1, 0, 1}));
  REQUIRE(pads.ok());
  const ValueId padded = testing::AddOp(g, op_names::kPad, {e, *pads}, "padded");  // no cpu kernel: the reference one
  REQUIRE(g.AddOutput(padded).ok());
  auto executor = CpuExecutor::Create(g);
  REQUIRE(executor.ok());
  REQUIRE((*executor)->Run(RandomInputs(g, 1)).ok());
  auto profile = (*executor)->ProfileByOperator(3);
  REQUIRE(profile.ok());
  std::map<std::string, KernelExecutor::OperatorTime> by_op;
  for (const auto& t : *profile) by_op[t.op] = t;
  REQUIRE(by_op.size() == 3);
  CHECK(by_op[op_names::kMatMul].nodes == 2);
  CHECK(by_op[op_names::kMatMul].reference == 0);
  CHECK(by_op[op_names::kErf].nodes == 1);
  CHECK(by_op[op_names::kErf].reference == 0);
  CHECK(by_op[op_names::kPad].nodes == 1);
  CHECK(by_op[op_names::kPad].reference == 1);
  for (size_t i = 0; i < profile->size(); ++i) {
    CHECK((*profile)[i].seconds > 0);
    if (i > 0) CHECK((*profile)[i - 1].seconds >= (*profile)[i].seconds);
  }
}

TEST_CASE("The cpu executor refuses missing and mis-shaped inputs") {
  auto model = models::BuildModel("nasrnn", {.layers = 1});
  REQUIRE(model.ok());
  auto executor = CpuExecutor::Create(model->graph);
  REQUIRE(executor.ok());
  TensorMap inputs = RandomInputs(model->graph, 1);
  const std::string first = inputs.begin()->first;
  TensorMap missing = inputs;
  missing.erase(first);
  auto r = (*executor)->Run(missing);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(std::string(r.status().message()), Catch::Contains("no data for input '" + first + "'"));
  TensorMap wrong = inputs;
  wrong[first] = Tensor<float>(Shape{2, 2});
  r = (*executor)->Run(wrong);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(std::string(r.status().message()), Catch::Contains("has shape [2,2]"));
}

TEST_CASE("The cpu executor refuses a graph with an operator outside the library") {
  auto m = testing::NewModel(13);
  testing::AddInput(m, "x", {1, 4});
  auto* custom = m.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(1);
  auto* op = testing::AddNode(m, "FancyOp", {"x"}, {"y"}, "fancy");
  op->set_domain("com.example");
  auto* vi = m.mutable_graph()->add_value_info();
  vi->set_name("y");
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {1, 4}) vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  testing::AddOutput(m, "y");
  auto model = ImportOnnx(m);
  REQUIRE(model.ok());
  auto executor = CpuExecutor::Create(model->graph);
  REQUIRE_FALSE(executor.ok());
  CHECK_THAT(std::string(executor.status().message()),
             Catch::Contains("'fancy'") && Catch::Contains("not in the operator library"));
}

TEST_CASE("Two graphs compared on executor pairs: each graph's outputs, positive times, errors passed on") {
  auto a = models::BuildModel("nasrnn", {.layers = 1});
  REQUIRE(a.ok());
  // b: a with its output doubled as a second output.
  Graph b = a->graph;
  const std::string y = b.value(b.outputs()[0]).name;
  auto two = b.AddWeight("two", TensorData::Float({1}, {2.0f}));
  REQUIRE(two.ok());
  REQUIRE(b.AddOutput(testing::AddOp(b, op_names::kScalarMul, {b.outputs()[0], *two}, "doubled")).ok());
  const TensorMap inputs = RandomInputs(a->graph, 7);
  auto c = CompareGraphs("cpu", a->graph, b, inputs, 4, 3);  // 3 pairs asked: 4 made, in both orders
  REQUIRE(c.ok());
  CHECK(c->a_seconds > 0);
  CHECK(c->b_seconds > 0);
  auto ea = RunReference(a->graph, inputs), eb = RunReference(b, inputs);
  REQUIRE((ea.ok() && eb.ok()));
  CHECK(RelativeDifference(*ea, c->a_outputs) <= 1e-5);
  CHECK(RelativeDifference(*eb, c->b_outputs) <= 1e-5);
  REQUIRE(c->b_outputs.count("doubled") == 1);
  const std::vector<float>&ya = c->a_outputs.at(y).data, &yd = c->b_outputs.at("doubled").data;
  REQUIRE(ya.size() == yd.size());
  for (size_t i = 0; i < ya.size(); ++i) CHECK(yd[i] == 2 * ya[i]);
  CHECK_FALSE(CompareGraphs("tpu", a->graph, b, inputs, 4).ok());
}

TEST_CASE("LayerNormalization normalizes each slice from its axis on, on oneDNN and on the reference kernel") {
  // Over the last dimension with a shift (BERT's form), and over the last two without.
  const Shape shape = {2, 3, 40};
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, shape);
  REQUIRE(x.ok());
  const ValueId scale_row = testing::AddWeight(g, "scale_row", {40}, 1),
                shift_row = testing::AddWeight(g, "shift_row", {40}, 2);
  const ValueId scale_block = testing::AddWeight(g, "scale_block", {3, 40}, 3);
  REQUIRE(g.AddOutput(testing::AddOp(g, op_names::kLayerNormalization, {*x, scale_row, shift_row}, "rows",
                                     Params().Set("axis", int64_t{-1}).Set("epsilon", 1e-5)))
              .ok());
  REQUIRE(g.AddOutput(testing::AddOp(g, op_names::kLayerNormalization, {*x, scale_block}, "blocks",
                                     Params().Set("axis", int64_t{1}).Set("epsilon", 1e-3)))
              .ok());
  auto executor = CpuExecutor::Create(g);
  REQUIRE(executor.ok());
  CHECK((*executor)->num_reference() == 0);
  const TensorMap inputs = RandomInputs(g, 9);
  auto got = (*executor)->Run(inputs);
  auto reference = RunReference(g, inputs);
  REQUIRE((got.ok() && reference.ok()));

  // The definition, in doubles.
  auto expect = [&](const std::string& out, int64_t width, ValueId scale, ValueId shift, double eps) {
    const std::vector<float>& in = inputs.at("x").data;
    const auto scales = g.ConstantData(scale)->floats();
    for (size_t row = 0; row * width < in.size(); ++row) {
      double mean = 0, var = 0;
      for (int64_t i = 0; i < width; ++i) mean += in[row * width + i];
      mean /= static_cast<double>(width);
      for (int64_t i = 0; i < width; ++i) var += (in[row * width + i] - mean) * (in[row * width + i] - mean);
      var /= static_cast<double>(width);
      for (int64_t i = 0; i < width; ++i) {
        double y = (in[row * width + i] - mean) / std::sqrt(var + eps) * scales[i];
        if (shift != kNoValue) y += g.ConstantData(shift)->floats()[i];
        INFO(out << " row " << row << " element " << i);
        CHECK(reference->at(out).data[row * width + i] == Approx(y).margin(1e-5));
        CHECK(got->at(out).data[row * width + i] == Approx(y).margin(1e-4));
      }
    }
  };
  expect("rows", 40, scale_row, shift_row, 1e-5);
  expect("blocks", 120, scale_block, kNoValue, 1e-3);

  // A scale that is not the slice's shape is refused.
  auto bad =
      g.AddNode(testing::Op(op_names::kLayerNormalization), Params().Set("axis", int64_t{-1}), {*x, scale_block});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()), Catch::Contains("normalized slice's shape"));
}
