// Products at any rank (taso/passes/row_form.h): linear layers on activations of rank 3, as
// exporters write them, are computed on their rows for the search and get their rank
// back after it, computing the same throughout.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <set>

#include "rule_lookup.h"
#include "taso/ir/executor.h"
#include "taso/ir/ops/names.h"
#include "taso/passes/row_form.h"
#include "taso/pipeline/pipeline.h"
#include "test_util.h"

namespace taso {
namespace {

using testing::AddOp;
using testing::CountOps;

ValueId Bias(Graph& g, const std::string& name, int64_t n, uint64_t seed) {
  const Tensor<float> t = testing::RandomTensor({n}, seed);
  return *g.AddWeight(name, TensorData::Float({n}, t.data));
}

// x [2, 4, 8] -> MatMul(W 8x6) -> Add(b, .) -> Relu -> MatMul(V 6x5) -> * 2 -> y, and a
// second output read at rank 3 by a per-token Add (positional: varies along the rows).
Graph TwoLinearLayers() {
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {2, 4, 8});
  const ValueId product = AddOp(g, op_names::kMatMul, {x, testing::AddWeight(g, "W", {8, 6}, 1)}, "product");
  const ValueId h =
      AddOp(g, op_names::kAdd, {Bias(g, "b", 6, 2), product}, "h");  // the bias first, as PyTorch writes it
  const ValueId r = AddOp(g, op_names::kRelu, {h}, "r");
  const ValueId z = AddOp(g, op_names::kMatMul, {r, testing::AddWeight(g, "V", {6, 5}, 3)}, "z");
  const ValueId two = *g.AddWeight("two", TensorData::Float({}, {2.0f}));
  REQUIRE(g.AddOutput(AddOp(g, op_names::kScalarMul, {z, two}, "y")).ok());
  REQUIRE(g.AddOutput(AddOp(g, op_names::kAdd, {h, testing::AddWeight(g, "P", {4, 6}, 4)}, "positional")).ok());
  return g;
}

void CheckSameOutputs(const Graph& a, const Graph& b) {
  std::set<std::string> names;  // the outputs keep their names
  for (ValueId v : b.outputs()) names.insert(b.value(v).name);
  for (ValueId v : a.outputs()) CHECK(names.count(a.value(v).name) == 1);
  CHECK(testing::OutputDifference(a, b) < 1e-5);
}

int MaxRankOf(const Graph& g, const std::string& op) {
  int rank = 0;
  for (NodeId n = 0; n < g.num_nodes(); ++n)
    if (g.node(n).op->name() == op) rank = std::max(rank, static_cast<int>(g.value(g.node(n).outputs[0]).shape.size()));
  return rank;
}

TEST_CASE("Linear layers on rank-3 activations are computed on their rows for the search") {
  const Graph g = TwoLinearLayers();
  auto flat = FlattenRowRegions(g);
  REQUIRE(flat.ok());
  CHECK(CountOps(*flat, op_names::kGemm) == 1);    // the product with its bias, as rules state a linear layer
  CHECK(CountOps(*flat, op_names::kMatMul) == 1);  // the product without one
  CHECK(MaxRankOf(*flat, op_names::kMatMul) == 2);
  CHECK(MaxRankOf(*flat, op_names::kRelu) == 2);
  CHECK(MaxRankOf(*flat, op_names::kScalarMul) == 2);
  // In through one Reshape, out through one for each value read at rank 3: y, and h for
  // the per-token Add, which is not the same for every row and stays at rank 3.
  CHECK(CountOps(*flat, op_names::kReshape) == 3);
  CHECK(MaxRankOf(*flat, op_names::kAdd) == 3);
  CheckSameOutputs(g, *flat);
}

TEST_CASE("After the search the rows get their rank back, Gemm as MatMul and Add") {
  const Graph g = TwoLinearLayers();
  auto flat = FlattenRowRegions(g);
  REQUIRE(flat.ok());
  auto restored = RestoreRowRank(*flat);
  REQUIRE(restored.ok());
  CHECK(CountOps(*restored, op_names::kReshape) == 0);
  CHECK(CountOps(*restored, op_names::kGemm) == 0);
  CHECK(CountOps(*restored, op_names::kMatMul) == 2);
  CHECK(MaxRankOf(*restored, op_names::kMatMul) == 3);
  CHECK(restored->num_nodes() == g.num_nodes());
  for (ValueId v : g.outputs()) CHECK(restored->value(restored->FindValue(g.value(v).name)).shape == g.value(v).shape);
  CheckSameOutputs(g, *restored);
}

TEST_CASE("Rows stacked by a rewrite are read flattened where a node cannot take them at rank 3") {
  // Two linear layers' rows stacked (a Concat of axis 0 at rank 2), as the e-graph merges
  // steps of a recurrent cell: the Concat reads its inputs flattened, the rest gets rank 3.
  Graph g;
  std::vector<ValueId> rows;
  for (int i = 0; i < 2; ++i) {
    const ValueId x = *g.AddInput("x" + std::to_string(i), DataType::kFloat32, {1, 3, 8});
    const ValueId shape = *g.AddWeight("s" + std::to_string(i), TensorData::Int64({2}, {-1, 8}));
    const ValueId flat =
        AddOp(g, op_names::kReshape, {x, shape}, "x" + std::to_string(i) + "_rows");  // as flattening names it
    rows.push_back(AddOp(g, op_names::kRelu, {flat}, "r" + std::to_string(i)));
  }
  const ValueId stacked = AddOp(g, op_names::kConcat, rows, "stacked", Params().Set("axis", int64_t{0}));
  const ValueId back = *g.AddWeight("back", TensorData::Int64({3}, {-1, 3, 8}));
  REQUIRE(g.AddOutput(AddOp(g, op_names::kReshape, {stacked, back}, "y")).ok());
  REQUIRE(g.AddOutput(AddOp(g, op_names::kReshape, {rows[0], back}, "y0")).ok());
  auto restored = RestoreRowRank(g);
  REQUIRE(restored.ok());
  CHECK(MaxRankOf(*restored, op_names::kRelu) == 3);    // r0 reaches a Reshape: its rank is back
  CHECK(MaxRankOf(*restored, op_names::kConcat) == 2);  // rows stacked stay stacked
  CheckSameOutputs(g, *restored);
}

TEST_CASE("Rows the user flattened stay flattened") {
  // x [2, 4, 8] -> Reshape [-1, 8] -> Gemm -> Reshape [2, 4, 6], as the user wrote it.
  Graph g;
  const ValueId x = *g.AddInput("x", DataType::kFloat32, {2, 4, 8});
  const ValueId flat = AddOp(g, op_names::kReshape, {x, *g.AddWeight("s", TensorData::Int64({2}, {-1, 8}))}, "flat");
  const ValueId y2 = AddOp(g, op_names::kGemm, {flat, testing::AddWeight(g, "W", {8, 6}, 1), Bias(g, "b", 6, 2)}, "y2");
  REQUIRE(
      g.AddOutput(AddOp(g, op_names::kReshape, {y2, *g.AddWeight("t", TensorData::Int64({3}, {2, 4, 6}))}, "y")).ok());
  auto restored = RestoreRowRank(g);
  REQUIRE(restored.ok());
  CHECK(CountOps(*restored, op_names::kGemm) == 1);
  CHECK(CountOps(*restored, op_names::kReshape) == 2);
}

TEST_CASE("Products of two activations and graphs without a product by a matrix keep their form") {
  Graph g;
  const ValueId q = *g.AddInput("q", DataType::kFloat32, {2, 4, 8});
  const ValueId k = *g.AddInput("k", DataType::kFloat32, {2, 8, 4});
  const ValueId scores = AddOp(g, op_names::kMatMul, {q, k}, "scores");
  REQUIRE(g.AddOutput(AddOp(g, op_names::kRelu, {scores}, "y")).ok());
  auto flat = FlattenRowRegions(g);
  REQUIRE(flat.ok());
  CHECK(CountOps(*flat, op_names::kReshape) == 0);
  CHECK(MaxRankOf(*flat, op_names::kMatMul) == 3);
  CHECK(flat->num_nodes() == g.num_nodes());
}

std::multiset<std::string> OnnxOperators(const Graph& g) {
  std::multiset<std::string> ops;
  for (NodeId n = 0; n < g.num_nodes(); ++n) ops.insert(std::string(g.node(n).op->name()));
  return ops;
}

TEST_CASE("A LoRA MLP exported by PyTorch at 32 tokens has its adapter folded, at rank 3") {
  // base(x) + 2 B(A(x)), x [1, 32, 768]: PyTorch writes MatMul + Add at rank 3.
  const OnnxModel model = testing::TorchPatternExport("lora_mlp_t32");
  PipelineOptions options;
  options.backend = Backend::kAnalytic;
  options.target = Target::kCpu;
  options.search = DefaultSearchKind(Backend::kAnalytic);
  options.engine = SearchEngine::kEGraph;
  options.verify_speed = false;
  absl::StatusOr<PipelineResult> r = OptimizeModel(model, testing::ShippedRules().rules, options);
  REQUIRE(r.ok());
  CHECK_FALSE(r->search.rules_applied.empty());
  const Graph& out = r->model.graph;
  // The hand merge's graph: two linear layers, as PyTorch writes them, and the relu.
  CHECK(OnnxOperators(out) == std::multiset<std::string>{op_names::kMatMul, op_names::kAdd, op_names::kRelu,
                                                         op_names::kMatMul, op_names::kAdd});
  CHECK(MaxRankOf(out, op_names::kMatMul) == 3);
  REQUIRE(r->self_check.has_value());
  CHECK(r->self_check->mismatch.empty());
}

}  // namespace
}  // namespace taso
