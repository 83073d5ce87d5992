// Dense mixtures of experts merged (taso/passes/rewrite_gated_mixtures.h): the merged graph
// computes what the input does, mixtures that are not whole are left alone, and the
// pipeline writes the merge only where the runtime times it faster.
#include <catch2/catch.hpp>

#include <set>

#include "stand_in_runtime.h"
#include "taso/ir/ops/names.h"
#include "taso/passes/fold.h"
#include "taso/passes/rewrite_gated_mixtures.h"
#include "taso/pipeline/pipeline.h"
#include "test_util.h"

namespace taso {
namespace {

using testing::AddOp;
using testing::CountOps;
using testing::GatedMixture;

// The merged graph with its weight-only nodes folded, as the pipeline writes it.
Graph MergedAndFolded(const Graph& g, int mixtures) {
  absl::StatusOr<GatedMixturesMerged> merged = MergeGatedMixtures(g);
  INFO(merged.status().ToString());
  REQUIRE(merged.ok());
  CHECK(merged->mixtures == mixtures);
  absl::StatusOr<Graph> folded = FoldWeights(merged->graph);
  REQUIRE(folded.ok());
  return *std::move(folded);
}

// One wide first layer, the grouped scale (three views and one Mul), one stacked second
// layer and the gate times the stacked biases; the gate's own layer and softmax.
const std::multiset<std::string> kMergedOperators{
    op_names::kGemm,    op_names::kSoftmax, op_names::kGemm,    op_names::kRelu, op_names::kReshape,
    op_names::kReshape, op_names::kMul,     op_names::kReshape, op_names::kGemm, op_names::kGemm};

TEST_CASE("PyTorch's export of a dense mixture of four experts becomes one wide and one stacked layer") {
  const OnnxModel model = testing::TorchPatternExport("experts");
  const Graph merged = MergedAndFolded(model.graph, 1);
  CHECK(testing::OperatorNames(merged) == kMergedOperators);
  CHECK(testing::OutputDifference(model.graph, merged) < 1e-5);
}

TEST_CASE("The same mixture at 32 tokens, as MatMul and Add at rank 3, is merged in that form") {
  const OnnxModel model = testing::TorchPatternExport("experts_t32");
  const Graph merged = MergedAndFolded(model.graph, 1);
  CHECK(CountOps(merged, op_names::kGemm) == 0);
  CHECK(CountOps(merged, op_names::kMatMul) == 4);  // the gate's, the wide, the stacked, the gated biases
  CHECK(CountOps(merged, op_names::kReshape) == 3);
  CHECK(CountOps(merged, op_names::kMul) == 1);
  CHECK(CountOps(merged, op_names::kSlice) == 0);
  CHECK(testing::OutputDifference(model.graph, merged) < 1e-5);
}

TEST_CASE("A mixture is merged with the sum's other terms kept, whatever the order of its terms") {
  const Graph g = GatedMixture({.experts = 3, .residual = true});
  const Graph merged = MergedAndFolded(g, 1);
  CHECK(CountOps(merged, op_names::kMul) == 1);
  CHECK(CountOps(merged, op_names::kAdd) == 1);  // x + the merged mixture
  CHECK(CountOps(merged, op_names::kSlice) == 0);
  CHECK(CountOps(merged, op_names::kGemm) == 4);  // the gate's, the wide, the stacked, the gated biases
  CHECK(testing::OutputDifference(g, merged) < 1e-5);
}

TEST_CASE("Experts whose first layers read different inputs keep them, their hidden units joined") {
  const Graph g = GatedMixture({.experts = 4, .shared_input = false});
  const Graph merged = MergedAndFolded(g, 1);
  CHECK(CountOps(merged, op_names::kConcat) == 1);
  CHECK(CountOps(merged, op_names::kGemm) == 1 + 4 + 2);  // the gate's, the four first layers, the stack and the biases
  CHECK(CountOps(merged, op_names::kMul) == 1);
  CHECK(testing::OutputDifference(g, merged) < 1e-5);
}

TEST_CASE("A mixture missing a column, or whose product is read elsewhere, is left alone") {
  Graph g;
  SECTION("a column missing") { g = GatedMixture({.experts = 3, .summed = 2}); }
  SECTION("a product read elsewhere") {
    g = GatedMixture({.experts = 2});
    REQUIRE(g.AddOutput(g.FindValue("e0_second")).ok());
  }
  absl::StatusOr<GatedMixturesMerged> merged = MergeGatedMixtures(g);
  REQUIRE(merged.ok());
  CHECK(merged->mixtures == 0);
  CHECK(merged->graph.StructuralHash() == g.StructuralHash());
}

TEST_CASE("The pipeline writes the merged mixture where the runtime times it faster, else the input", "[speed_check]") {
  const OnnxModel model = NewOnnxModel(GatedMixture({.experts = 3}));
  double merged_ms = 0;
  bool merged = false;
  SECTION("faster") { merged_ms = 0.5, merged = true; }
  SECTION("slower") { merged_ms = 2, merged = false; }
  testing::OpPricedRuntime runtime(op_names::kReshape, merged_ms);  // the merge's grouped scale
  const PipelineOptions options = testing::SpeedCheckedBy(runtime);
  const PipelineResult r = testing::OptimizedWithSpeedCheck(model, options);
  CHECK(r.search.rules_applied.count(std::string(kGatedMixtureRewrite)) == (merged ? 1 : 0));
  CHECK((CountOps(r.model.graph, op_names::kReshape) == 3) == merged);
  CHECK((r.speed_check->extraction == kGatedMixturesMerged) == merged);
  if (merged)
    CHECK_THAT(SummaryText(options, r, "m"), Catch::Contains("the graph with its gated mixtures merged is written"));
  CHECK(testing::OutputDifference(model.graph, r.model.graph) < 1e-5);
}

}  // namespace
}  // namespace taso
