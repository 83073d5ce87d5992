// Folding batch normalizations, biases and relus into convolutions, and setting biases
// apart for the search: the graphs compute what they computed, and only chains nothing
// else reads are folded.
#include <catch2/catch.hpp>

#include "models/models.h"
#include "taso/ir/executor.h"
#include "taso/ir/ops/names.h"
#include "taso/passes/inference_fusion.h"
#include "test_util.h"

using namespace taso;
using testing::AddOp;
using testing::AddWeight;

namespace {

int Count(const Graph& g, absl::string_view op) {
  int n = 0;
  for (NodeId i = 0; i < g.num_nodes(); ++i) n += g.node(i).op->name() == op;
  return n;
}

double Difference(const Graph& a, const Graph& b) { return testing::OutputDifference(a, b, 3); }

Params Same3x3() { return Params().Set("pads", std::vector<int64_t>{1, 1, 1, 1}); }

}  // namespace

TEST_CASE("Batch normalizations and relus after convolutions are folded on the CNN models") {
  for (const std::string name : {"resnet50", "resnext50", "inception_v3"}) {
    SECTION(name) {
      auto model = models::BuildModel(name, {.image_size = name == "inception_v3" ? 75 : 32});
      REQUIRE(model.ok());
      const Graph& g = model->graph;
      REQUIRE(Count(g, op_names::kBatchNormalization) > 0);
      auto fused = FuseIntoConvolutions(g);
      REQUIRE(fused.ok());
      CHECK(Count(*fused, op_names::kBatchNormalization) == 0);
      CHECK(fused->num_nodes() < g.num_nodes());
      CHECK(Difference(g, *fused) < 1e-4);

      // Set apart, every convolution the rules can match has no bias; fused again, the
      // graph is what it was.
      auto separated = SeparateConvolutionBias(*fused);
      REQUIRE(separated.ok());
      CHECK(Difference(g, *separated) < 1e-4);
      CHECK(Count(*separated, op_names::kAdd) > Count(*fused, op_names::kAdd));
      auto again = FuseIntoConvolutions(*separated);
      REQUIRE(again.ok());
      CHECK(again->num_nodes() == fused->num_nodes());
      CHECK(Difference(g, *again) < 1e-4);
    }
  }
}

TEST_CASE("Biases after a channel split are folded into the convolution before it") {
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {1, 4, 6, 6});
  REQUIRE(x.ok());
  const ValueId y = AddOp(g, op_names::kConv2D, {*x, AddWeight(g, "w", {6, 4, 3, 3}, 1)}, "y", Same3x3());
  auto pieces = g.AddNode(testing::Op(op_names::kSplit),
                          Params().Set("axis", 1).Set("sizes", std::vector<int64_t>{2, 4}), {y}, "split", {"p", "q"});
  REQUIRE(pieces.ok());
  const ValueId p = AddOp(g, op_names::kRelu,
                          {AddOp(g, op_names::kAdd, {(*pieces)[0], AddWeight(g, "bp", {1, 2, 1, 1}, 2)}, "pb")}, "pr");
  const ValueId q = AddOp(g, op_names::kRelu,
                          {AddOp(g, op_names::kAdd, {AddWeight(g, "bq", {1, 4, 1, 1}, 3), (*pieces)[1]}, "qb")}, "qr");
  REQUIRE(g.AddOutput(p).ok());
  REQUIRE(g.AddOutput(q).ok());

  auto fused = FuseIntoConvolutions(g);
  REQUIRE(fused.ok());
  REQUIRE(fused->num_nodes() == 2);  // Conv2D with bias and relu, then the split
  const Node& conv = fused->node(0);
  CHECK(conv.op->name() == op_names::kConv2D);
  CHECK(conv.params.Str("activation") == "relu");
  CHECK(fused->value(conv.inputs[2]).shape == Shape{6});
  CHECK(fused->value(fused->outputs()[0]).name == "pr");
  CHECK(Difference(g, *fused) < 1e-5);
}

TEST_CASE("A convolution whose output is read elsewhere keeps its batch normalization") {
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {1, 3, 5, 5});
  REQUIRE(x.ok());
  const ValueId y = AddOp(g, op_names::kConv2D, {*x, AddWeight(g, "w", {3, 3, 3, 3}, 1)}, "y", Same3x3());
  std::vector<ValueId> stats = {y};
  for (const char* s : {"scale", "shift", "mean"}) stats.push_back(AddWeight(g, s, {3}, stats.size()));
  auto var = g.AddWeight("var", TensorData::Float({3}, {0.5f, 1.0f, 2.0f}));
  REQUIRE(var.ok());
  stats.push_back(*var);
  const ValueId bn = AddOp(g, op_names::kBatchNormalization, stats, "bn");
  const ValueId sum = AddOp(g, op_names::kAdd, {bn, y}, "sum");  // reads the convolution's output too
  REQUIRE(g.AddOutput(sum).ok());
  auto fused = FuseIntoConvolutions(g);
  REQUIRE(fused.ok());
  CHECK(Count(*fused, op_names::kBatchNormalization) == 1);
  CHECK(Difference(g, *fused) == 0);
}
