// The benchmark models: each is written by taso-models' builder, passes the ONNX checker,
// imports, exports, re-imports unchanged, and computes identical outputs throughout.
#include <catch2/catch.hpp>

#include <cmath>
#include <iterator>
#include <set>
#include <string>

#include "absl/types/span.h"

#include "models/models.h"
#include "taso/ir/executor.h"
#include "taso/ir/ops/names.h"
#include "test_util.h"

using namespace taso;

namespace {

// The size each model round-trips at: every node of the full model at smaller images and
// one BERT layer, so that the reference executor's three runs take seconds, also under the
// sanitizers (nasnet_a at 224 pixels took 150 s there). The full sizes are checked below.
models::ModelOptions RoundTripSize(const std::string& name) {
  if (name == "inception_v3") return {.image_size = 96};  // its valid convolutions need 75 or more
  if (name == "bert") return {.layers = 1};
  return {.image_size = 64};  // ignored by the models without images
}

// Built, written (through the ONNX checker), read back, written and read again: every node
// in the library, the graph unchanged, and the reference outputs identical and finite.
void CheckRoundTrip(const std::string& name) {
  auto dir = testing::TempDir("models_" + name);
  auto built = models::BuildModel(name, RoundTripSize(name));
  REQUIRE(built.ok());
  const std::string path = (dir / (name + ".onnx")).string();
  REQUIRE(ExportOnnxFile(*built, path).ok());  // export runs the ONNX checker

  auto imported = ImportOnnxFile(path);
  REQUIRE(imported.ok());
  for (NodeId n = 0; n < imported->graph.num_nodes(); ++n) REQUIRE_FALSE(imported->graph.node(n).op->is_opaque());
  auto exported = ExportOnnx(*imported);
  REQUIRE(exported.ok());
  auto again = ImportOnnx(*exported);
  REQUIRE(again.ok());
  CHECK(again->graph.DebugString() == imported->graph.DebugString());

  const TensorMap inputs = RandomInputs(built->graph, 11);
  auto original = RunReference(built->graph, inputs);
  auto from_file = RunReference(imported->graph, inputs);
  auto round_tripped = RunReference(again->graph, inputs);
  REQUIRE(original.ok());
  REQUIRE(from_file.ok());
  REQUIRE(round_tripped.ok());
  CHECK(MaxAbsDifference(*original, *from_file) == 0);
  CHECK(MaxAbsDifference(*from_file, *round_tripped) == 0);
  for (const auto& [output, t] : *original)
    for (float v : t.data) REQUIRE(std::isfinite(v));
}

// One test case per model, so that CTest runs them side by side.
constexpr const char* kRoundTripped[] = {"resnet50",      "resnext50",      "regnetx_200mf", "nasnet_a", "nasrnn",
                                         "lstm",          "bert",           "inception_v3",  "lora_mlp", "task_heads",
                                         "qkv_attention", "lora_attention", "head_attention"};

}  // namespace

TEST_CASE("The round-trip tests name every benchmark model") {
  std::set<std::string> built;
  for (const auto& info : models::AllModels()) built.insert(info.name);
  CHECK(std::set<std::string>(std::begin(kRoundTripped), std::end(kRoundTripped)) == built);
}

#define TASO_ROUND_TRIP_TEST(model) \
  TEST_CASE("Benchmark model " #model " round-trips through ONNX with identical outputs") { CheckRoundTrip(#model); }
TASO_ROUND_TRIP_TEST(resnet50)
TASO_ROUND_TRIP_TEST(resnext50)
TASO_ROUND_TRIP_TEST(regnetx_200mf)
TASO_ROUND_TRIP_TEST(nasnet_a)
TASO_ROUND_TRIP_TEST(nasrnn)
TASO_ROUND_TRIP_TEST(lstm)
TASO_ROUND_TRIP_TEST(bert)
TASO_ROUND_TRIP_TEST(inception_v3)
TASO_ROUND_TRIP_TEST(lora_mlp)
TASO_ROUND_TRIP_TEST(task_heads)
TASO_ROUND_TRIP_TEST(qkv_attention)
TASO_ROUND_TRIP_TEST(lora_attention)
TASO_ROUND_TRIP_TEST(head_attention)

TEST_CASE("Benchmark models are deterministic and have the evaluated sizes") {
  auto a = models::BuildModel("nasrnn"), b = models::BuildModel("nasrnn");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(ExportOnnx(*a)->SerializeAsString() == ExportOnnx(*b)->SerializeAsString());
  CHECK(a->graph.inputs().size() == 5);
  CHECK(a->graph.value(a->graph.inputs()[0]).shape == Shape{1, 512});

  auto bert = models::BuildModel("bert", {.layers = 1});
  REQUIRE(bert.ok());
  CHECK(bert->graph.value(bert->graph.inputs()[0]).shape == Shape{64, 1024});
  auto inception = models::BuildModel("inception_v3");
  REQUIRE(inception.ok());
  CHECK(inception->graph.value(inception->graph.inputs()[0]).shape == Shape{1, 3, 299, 299});
  auto resnext = models::BuildModel("resnext50");
  REQUIRE(resnext.ok());
  int grouped = 0;
  for (NodeId n = 0; n < resnext->graph.num_nodes(); ++n)
    grouped += resnext->graph.node(n).params.Int("group", 1) == 32;
  CHECK(grouped == 16);  // one grouped 3x3 convolution per bottleneck block
  auto regnet = models::BuildModel("regnetx_200mf");
  REQUIRE(regnet.ok());
  int eight_wide = 0;
  for (NodeId n = 0; n < regnet->graph.num_nodes(); ++n) {
    const Node& node = regnet->graph.node(n);
    if (node.params.Int("group", 1) > 1) eight_wide += regnet->graph.value(node.inputs[1]).shape[1] == 8;
  }
  CHECK(eight_wide == 13);  // one per X block (depths 1, 1, 4, 7), groups of 8 channels
  CHECK_FALSE(models::BuildModel("alexnet").ok());
}

TEST_CASE("The LoRA attention block has an adapter on each of its four projections") {
  auto model = models::BuildModel("lora_attention", {.batch = 32});
  REQUIRE(model.ok());
  const Graph& g = model->graph;
  CHECK(g.value(g.inputs()[0]).shape == Shape{32, 768});
  CHECK(testing::CountOps(g, op_names::kGemm) == 4);
  CHECK(testing::CountOps(g, op_names::kMatMul) == 4 * 2 + 2);  // x A and (x A) B per adapter; scores and context
  int rank_16 = 0;
  for (ValueId w : g.weights()) rank_16 += g.value(w).shape == Shape{768, 16};
  CHECK(rank_16 == 4);
}

TEST_CASE("The per-head attention block has 36 projections of 64 and attends causally") {
  const int64_t tokens = 4;
  auto model = models::BuildModel("head_attention", {.batch = tokens});
  REQUIRE(model.ok());
  const Graph& g = model->graph;
  int per_head = 0;
  for (NodeId n = 0; n < g.num_nodes(); ++n) {
    const Node& node = g.node(n);
    per_head += node.op->name() == op_names::kGemm && g.value(node.inputs[1]).shape == Shape{64, 768};
  }
  CHECK(per_head == 36);
  // A token's output depends on the tokens before it, not on those after.
  TensorMap inputs = RandomInputs(g, 3);
  auto before = RunReference(g, inputs);
  REQUIRE(before.ok());
  std::vector<float>& x = inputs.begin()->second.data;
  for (int64_t i = 768 * (tokens - 1); i < 768 * tokens; ++i) x[i] += 1.0f;  // the last token
  auto after = RunReference(g, inputs);
  REQUIRE(after.ok());
  const std::vector<float>&y0 = before->begin()->second.data, &y1 = after->begin()->second.data;
  double earlier = 0, last = 0;
  for (int64_t i = 0; i < 768 * tokens; ++i) (i < 768 * (tokens - 1) ? earlier : last) += std::abs(y0[i] - y1[i]);
  CHECK(earlier == 0);
  CHECK(last > 0);
}

namespace {

// y = x W^T + b for one row x, W [out, in] as nn.Linear keeps it.
std::vector<float> Linear(absl::Span<const float> x, const TensorData& w, const TensorData& b) {
  const int64_t out = w.shape()[0], in = w.shape()[1];
  std::vector<float> y(b.floats().begin(), b.floats().end());
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i) y[o] += x[i] * w.floats()[o * in + i];
  return y;
}

float Sigmoid(float v) { return 1 / (1 + std::exp(-v)); }

}  // namespace

TEST_CASE("The LSTM model computes PyTorch's LSTMCell step by step, one weight per layer for all steps") {
  auto built = models::BuildModel("lstm", {.layers = 3});
  REQUIRE(built.ok());
  const Graph& g = built->graph;
  int products = 0;
  for (NodeId n = 0; n < g.num_nodes(); ++n) products += g.node(n).op->name() == op_names::kGemm;
  CHECK(products == 6);
  // nn.Linear's weight and bias for the input, then for the state; gates in PyTorch's
  // order: input, forget, cell, output.
  const std::vector<ValueId> weights = g.weights();
  REQUIRE(weights.size() == 4);
  const TensorData &w_x = *g.value(weights[0]).data, &b_x = *g.value(weights[1]).data, &w_h = *g.value(weights[2]).data,
                   &b_h = *g.value(weights[3]).data;
  const TensorMap inputs = RandomInputs(g, 5);
  const int64_t hidden = 512;
  std::vector<float> h = inputs.at("h0").data, c = inputs.at("c0").data;
  for (const char* x : {"x0", "x1", "x2"}) {
    const std::vector<float> gx = Linear(inputs.at(x).data, w_x, b_x), gh = Linear(h, w_h, b_h);
    for (int64_t k = 0; k < hidden; ++k) {
      auto gate = [&](int i) { return gx[i * hidden + k] + gh[i * hidden + k]; };
      c[k] = Sigmoid(gate(1)) * c[k] + Sigmoid(gate(0)) * std::tanh(gate(2));
      h[k] = Sigmoid(gate(3)) * std::tanh(c[k]);
    }
  }
  auto run = RunReference(g, inputs);
  REQUIRE(run.ok());
  REQUIRE(g.outputs().size() == 2);
  const std::vector<float>& got_h = run->at(g.value(g.outputs()[0]).name).data;
  const std::vector<float>& got_c = run->at(g.value(g.outputs()[1]).name).data;
  for (int64_t k = 0; k < hidden; ++k) {
    CHECK(got_h[k] == Approx(h[k]).margin(1e-5));
    CHECK(got_c[k] == Approx(c[k]).margin(1e-5));
  }
}
