// Joint layouts on the cpu backend: the layouts chosen are the cheaper ones by measured
// cost, and a graph at any layouts computes on the cpu executor what it computes plain.
#include <catch2/catch.hpp>

#include "absl/algorithm/container.h"

#include "models/models.h"
#include "taso/backends/cpu_executor.h"
#include "taso/backends/layouts.h"
#include "taso/ir/ops/names.h"
#include "taso/passes/inference_fusion.h"
#include "test_util.h"

using namespace taso;

namespace {

// Runs `laid_out` on the cpu executor and checks that it computes what `original`
// computes on the reference executor; returns how many nodes ran on reference kernels.
int ExpectCpuComputesAsReference(const Graph& original, const Graph& laid_out, uint64_t seed, double tolerance = 1e-5) {
  auto executor = CpuExecutor::Create(laid_out);
  REQUIRE(executor.ok());
  const TensorMap inputs = RandomInputs(original, seed);
  auto expected = RunReference(original, inputs);
  auto got = (*executor)->Run(inputs);
  REQUIRE(expected.ok());
  REQUIRE(got.ok());
  CHECK(RelativeDifference(*expected, *got) < tolerance);
  return (*executor)->num_reference();
}

// `model` at the layouts of `plan` computes what it computes plain: on the reference
// executor, to which layouts are invisible, and on the cpu executor, where they run.
void ExpectLaidOutComputesAsPlain(const Graph& model, CpuLayouts& layouts, const Graph& fused,
                                  const CpuLayouts::Plan& plan) {
  auto laid_out = layouts.Apply(fused, plan);
  REQUIRE(laid_out.ok());
  const TensorMap inputs = RandomInputs(model, 2);
  auto expected = RunReference(model, inputs);
  auto reference = RunReference(*laid_out, inputs);
  REQUIRE(expected.ok());
  REQUIRE(reference.ok());
  CHECK(RelativeDifference(*expected, *reference) < 1e-4);
  ExpectCpuComputesAsReference(model, *laid_out, 2, 1e-4);
}

// A benchmark CNN at a small size, and its graph with convolutions fused as the cpu
// runtime runs them.
struct SmallCnn {
  Graph graph, fused;
};
SmallCnn BuildSmallCnn(const std::string& name) {
  auto model = models::BuildModel(name, {.image_size = name == "inception_v3" ? 75 : 32, .layers = 1});
  REQUIRE(model.ok());
  auto fused = FuseIntoConvolutions(model->graph);
  REQUIRE(fused.ok());
  return SmallCnn{model->graph, *std::move(fused)};
}

}  // namespace

TEST_CASE("CNN models with every node that can run blocked blocked compute what they compute plain") {
  for (const std::string name : {"resnet50", "resnext50", "inception_v3", "nasnet_a"}) {
    SECTION(name) {
      const SmallCnn cnn = BuildSmallCnn(name);
      CpuCost cost(nullptr);
      CpuLayouts layouts(cost);
      const CpuLayouts::Plan plan = layouts.AllBlocked(cnn.fused);
      CHECK(absl::c_count(plan.blocked, true) > 0);
      ExpectLaidOutComputesAsPlain(cnn.graph, layouts, cnn.fused, plan);
    }
  }
}

TEST_CASE("NasNet-A at its chosen layouts costs no more than plain and computes what it computes plain") {
  const SmallCnn cnn = BuildSmallCnn("nasnet_a");
  CpuCost cost(nullptr);
  CpuLayouts layouts(cost);
  const CpuLayouts::Plan plan = layouts.Choose(cnn.fused);
  CHECK(plan.seconds <= layouts.AllPlain(cnn.fused).seconds);
  ExpectLaidOutComputesAsPlain(cnn.graph, layouts, cnn.fused, plan);
}

TEST_CASE("Layouts: the cost model's choice is never worse than all plain, and conversions are explicit") {
  // x[1,3,28,28] -> conv 3->16 -> relu -> conv 16->16 -> relu -> y: three input channels
  // do not block, so the first convolution reads x plain whatever is chosen.
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {1, 3, 28, 28});
  REQUIRE(x.ok());
  const Params same = Params().Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  const ValueId a =
      testing::AddOp(g, op_names::kConv2D, {*x, testing::AddWeight(g, "w1", {16, 3, 3, 3}, 1)}, "a", same);
  const ValueId b = testing::AddOp(g, op_names::kRelu, {a}, "b");
  const ValueId c =
      testing::AddOp(g, op_names::kConv2D, {b, testing::AddWeight(g, "w2", {16, 16, 3, 3}, 2)}, "c", same);
  const ValueId y = testing::AddOp(g, op_names::kRelu, {c}, "y");
  REQUIRE(g.AddOutput(y).ok());

  CpuCost cost(nullptr);
  CpuLayouts layouts(cost);
  const CpuLayouts::Plan plan = layouts.Choose(g);
  const CpuLayouts::Plan plain = layouts.AllPlain(g);
  CHECK(plain.conversions == 0);
  CHECK(plan.seconds <= plain.seconds);
  auto laid_out = layouts.Apply(g, plan);
  REQUIRE(laid_out.ok());
  int blocked = 0, conversions = 0;
  for (NodeId n = 0; n < laid_out->num_nodes(); ++n) {
    const Node& node = laid_out->node(n);
    const bool convert = node.op->name() == op_names::kLayoutConvert;
    blocked += !convert && node.params.Str("layout", "plain") == "blocked";
    conversions += convert;
  }
  CHECK(blocked == static_cast<int>(std::count(plan.blocked.begin(), plan.blocked.end(), true)));
  CHECK(conversions == plan.conversions);
  // The output keeps its name and is plain.
  const Value& out = laid_out->value(laid_out->outputs()[0]);
  CHECK(out.name == "y");
  CHECK(laid_out->node(out.producer).params.Str("layout", "plain") == "plain");
  // Its cost, node by node with the conversions as nodes, is what the plan says.
  CHECK(cost.TotalCost(*laid_out) == Approx(plan.seconds).epsilon(1e-9));
  ExpectCpuComputesAsReference(g, *laid_out, 4);
}

TEST_CASE("The cpu executor refuses a graph whose layouts do not fit together") {
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {1, 16, 8, 8});
  REQUIRE(x.ok());
  // A blocked relu feeding a plain one with no conversion between.
  const ValueId a = testing::AddOp(g, op_names::kRelu, {*x}, "a", Params().Set("layout", "blocked"));
  const ValueId b = testing::AddOp(g, op_names::kRelu, {a}, "b");
  REQUIRE(g.AddOutput(b).ok());
  auto executor = CpuExecutor::Create(g);
  REQUIRE_FALSE(executor.ok());
  CHECK_THAT(std::string(executor.status().message()), Catch::Contains("in another layout"));
}

TEST_CASE("A map times one value per channel runs blocked, reading the values plain, whichever side they are on") {
  // A squeeze-excitation block: y = relu(conv(x)); s = sigmoid(mean of y per channel);
  // then y * s, s - (y * s) and (s - y * s) / s, all on 16 channels, so all can block.
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {1, 3, 12, 12});
  REQUIRE(x.ok());
  const Params same = Params().Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  const ValueId c = testing::AddOp(g, op_names::kConv2D, {*x, testing::AddWeight(g, "w", {16, 3, 3, 3}, 1)}, "c", same);
  const ValueId y = testing::AddOp(g, op_names::kRelu, {c}, "y");
  const ValueId s =
      testing::AddOp(g, op_names::kSigmoid, {testing::AddOp(g, op_names::kGlobalAveragePool, {y}, "mean")}, "s");
  const ValueId m = testing::AddOp(g, op_names::kMul, {y, s}, "m");
  const ValueId d = testing::AddOp(g, op_names::kSub, {s, m}, "d");
  const ValueId q = testing::AddOp(g, op_names::kDiv, {d, s}, "q");
  REQUIRE(g.AddOutput(testing::AddOp(g, op_names::kRelu, {q}, "out")).ok());

  CpuCost cost(nullptr);
  CpuLayouts layouts(cost);
  CpuLayouts::Plan plan = layouts.AllPlain(g);
  for (NodeId n = 0; n < g.num_nodes(); ++n) {
    const std::string op(g.node(n).op->name());
    plan.blocked[n] = op == op_names::kConv2D || op == op_names::kMul || op == op_names::kSub || op == op_names::kDiv;
  }
  auto laid_out = layouts.Apply(g, plan);
  REQUIRE(laid_out.ok());
  for (const char* name : {"m", "d", "q"}) {
    const Value& v = laid_out->value(laid_out->FindValue(name));
    CHECK(laid_out->node(v.producer).params.Str("layout", "plain") == "blocked");
  }
  CHECK(ExpectCpuComputesAsReference(g, *laid_out, 6) == 0);
}
