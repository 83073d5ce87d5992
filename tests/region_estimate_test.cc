// EstimateByRegions (src/pipeline/region_estimate.h): the written graph priced as the
// input less the part of it its differing region saves, timed by a stand-in runtime here.
#include <catch2/catch.hpp>

#include "pipeline/region_estimate.h"
#include "taso/ir/ops/names.h"
#include "taso/pipeline/pipeline.h"
#include "taso/rewrite/cost.h"
#include "test_util.h"

namespace taso {
namespace {

using testing::AddOp;
using testing::AddWeight;

// Relu, Tanh, Tanh, Sigmoid, then x w1 + x w2 (`merged`: x (w1 + w2), computed as one
// product named as the sum was), then Relu: 8 nodes, or 6 merged. The regions reach three
// hops out, all but the first Relu.
Graph Products(bool merged) {
  Graph g;
  const ValueId input = *g.AddInput("input", DataType::kFloat32, {4, 16});
  const ValueId t = AddOp(g, op_names::kTanh, {AddOp(g, op_names::kRelu, {input}, "r")}, "t");
  const ValueId x = AddOp(g, op_names::kSigmoid, {AddOp(g, op_names::kTanh, {t}, "h")}, "x");
  const ValueId w1 = AddWeight(g, "w1", {16, 16}, 1), w2 = AddWeight(g, "w2", {16, 16}, 2);
  const ValueId y =
      merged ? AddOp(g, op_names::kMatMul, {x, AddWeight(g, "w12", {16, 16}, 3)}, "y")
             : AddOp(g, op_names::kAdd,
                     {AddOp(g, op_names::kMatMul, {x, w1}, "m1"), AddOp(g, op_names::kMatMul, {x, w2}, "m2")}, "y");
  REQUIRE(g.AddOutput(AddOp(g, op_names::kRelu, {y}, "out")).ok());
  return g;
}

// A runtime where a model takes 1 ms per node; or fails, when told to.
class NodeCountRuntime : public RuntimeTimer {
 public:
  explicit NodeCountRuntime(bool fails = false, double spread = 0.02) : fails_(fails), spread_(spread) {}
  std::string name() const override { return "stand-in"; }
  absl::StatusOr<PairTiming> Compare(const OnnxModel& a, const OnnxModel& b) override {
    ++comparisons;
    if (fails_) return absl::UnavailableError("the stand-in cannot run");
    return PairTiming{.a_seconds = a.graph.num_nodes() * 1e-3,
                      .b_seconds = b.graph.num_nodes() * 1e-3,
                      .pairs = 4,
                      .spread = spread_};
  }
  int comparisons = 0;

 private:
  bool fails_;
  double spread_;
};

// Prices the regions' nodes: the Products far below the 10 ms a region may take, so their
// regions reach three hops out.
AnalyticCost analytic;

PipelineResult PricedByOperators() {
  PipelineResult result;
  result.cost_before = 0.5;
  result.cost_after = 0.7;
  return result;
}

// EstimateByRegions on `result` as the pipeline records it: from its costs and speed
// check, into its region estimate and costs (left as they are where it gives none).
void EstimateInto(const Graph& input, const Graph& written, CostModel& cost, RuntimeTimer& region_timer,
                  RuntimeTimer& share_timer, PipelineResult& result) {
  const pipeline::RegionTiming timing{
      region_timer, share_timer, {result.cost_before, result.cost_after}, result.speed_check};
  std::optional<pipeline::RegionPricing> priced =
      pipeline::EstimateByRegions(NewOnnxModel(Graph()), input, written, cost, timing);
  if (!priced) return;
  result.region_estimate = std::move(priced->estimate);
  result.cost_before = priced->costs.before;
  result.cost_after = priced->costs.after;
}

TEST_CASE("The written graph is priced as the input less the part of it its region saves") {
  const Graph before = Products(false), after = Products(true);
  NodeCountRuntime runtime;
  PipelineResult result = PricedByOperators();
  // The input (8 nodes) takes 8 ms against its region's 7, which the rewrite takes to 5:
  // the region is 7/8 of the input and saves 2/7 of itself, a quarter of the input.

  SECTION("with the input as timed against its region") {
    EstimateInto(before, after, analytic, runtime, runtime, result);
    REQUIRE(result.region_estimate.has_value());
    // Regions: the products and the Add (3 nodes), the merged product (1), each with the
    // Sigmoid and the last Relu next to them, the second Tanh next to those, the first
    // Tanh next to that.
    CHECK(result.region_estimate->nodes_before == 3);
    CHECK(result.region_estimate->nodes_after == 1);
    CHECK(result.region_estimate->region_nodes_before == 7);
    CHECK(result.region_estimate->region_nodes_after == 5);
    CHECK_FALSE(result.region_estimate->input_timed);
    CHECK(result.region_estimate->share.a_seconds == Approx(8e-3));
    CHECK(result.region_estimate->share.b_seconds == Approx(7e-3));
    CHECK(result.cost_before == Approx(8e-3));
    CHECK(result.cost_after == Approx(6e-3));
    CHECK(result.region_estimate->cost_before_by_operators == 0.5);
    CHECK(result.region_estimate->cost_after_by_operators == 0.7);
  }
  SECTION("with the input as the speed check timed it") {
    result.speed_check.emplace();
    result.speed_check->timing = PairTiming{.a_seconds = 10e-3, .b_seconds = 9e-3, .pairs = 4};
    EstimateInto(before, after, analytic, runtime, runtime, result);
    REQUIRE(result.region_estimate.has_value());
    CHECK(result.region_estimate->input_timed);
    CHECK(result.cost_before == Approx(10e-3));
    // A quarter less, though the speed check's times ran 10/8 of the regions' (the
    // machine slower then): the parts are ratios of times taken together.
    CHECK(result.cost_after == Approx(10e-3 * 3 / 4));
  }
  CHECK(runtime.comparisons == 2);
}

TEST_CASE("A region takes a hop more only while it is priced within 10 ms") {
  // Every node priced at least `launch` seconds: the input's region is 5 nodes one hop
  // out, 6 two hops out, 7 three hops out.
  for (const auto& [launch, nodes] : std::vector<std::pair<double, int>>{{3e-3, 5}, {1.5e-3, 6}, {1e-3, 7}}) {
    AnalyticCost priced(AnalyticCost::Machine{.launch_seconds = launch});
    NodeCountRuntime runtime;
    PipelineResult result = PricedByOperators();
    EstimateInto(Products(false), Products(true), priced, runtime, runtime, result);
    REQUIRE(result.region_estimate.has_value());
    INFO(launch << " s a node");
    CHECK(result.region_estimate->region_nodes_before == nodes);
  }
}

TEST_CASE("Every run times the regions afresh") {
  // A region timed once can be wrong beyond its spread (LSTM's, in a machine's first
  // minutes); kept, it stayed wrong for every later run. Nothing is kept: two runs, two
  // pairs of comparisons.
  NodeCountRuntime runtime;
  for (int run = 0; run < 2; ++run) {
    PipelineResult result = PricedByOperators();
    EstimateInto(Products(false), Products(true), analytic, runtime, runtime, result);
    REQUIRE(result.region_estimate.has_value());
    CHECK(result.region_estimate->timing.pairs == 4);
    CHECK(result.region_estimate->share.pairs == 4);
    CHECK(result.cost_after / result.cost_before == Approx(3.0 / 4));
  }
  CHECK(runtime.comparisons == 4);
}

TEST_CASE("Nothing is timed and the estimate stays where the graphs compute alike or the runtime fails") {
  const Graph before = Products(false);
  NodeCountRuntime runtime, failing(true);
  PipelineResult result = PricedByOperators();
  EstimateInto(before, Products(false), analytic, runtime, runtime, result);
  CHECK(runtime.comparisons == 0);
  EstimateInto(before, Products(true), analytic, failing, failing, result);
  CHECK(failing.comparisons == 1);
  CHECK_FALSE(result.region_estimate.has_value());
  CHECK(result.cost_before == 0.5);
  CHECK(result.cost_after == 0.7);
}

TEST_CASE("Graphs that compute alike are priced at the input's time as the speed check timed it") {
  NodeCountRuntime runtime;
  PipelineResult result = PricedByOperators();
  result.speed_check.emplace();
  result.speed_check->kept_input = true;  // the input written, timed against the search's graph
  result.speed_check->timing = PairTiming{.a_seconds = 10e-3, .b_seconds = 11e-3, .pairs = 4};
  EstimateInto(Products(false), Products(false), analytic, runtime, runtime, result);
  CHECK(runtime.comparisons == 0);
  REQUIRE(result.region_estimate.has_value());
  CHECK(result.region_estimate->alike);
  CHECK(result.cost_before == Approx(10e-3));
  CHECK(result.cost_after == Approx(10e-3));
  CHECK(result.region_estimate->cost_before_by_operators == 0.5);
  CHECK_THAT(SummaryText(PipelineOptions(), result, "m"), Catch::Contains("the output computes as the input"));

  // Also where the speed check's time ran out before it timed the input's own graph: the
  // input is the first of every pair it timed.
  PipelineResult untimed = PricedByOperators();
  untimed.speed_check.emplace();
  untimed.speed_check->written_untimed = true;
  untimed.speed_check->timing = PairTiming{.a_seconds = 12e-3, .b_seconds = 11e-3, .pairs = 4};
  EstimateInto(Products(false), Products(false), analytic, runtime, runtime, untimed);
  REQUIRE(untimed.region_estimate.has_value());
  CHECK(untimed.cost_before == Approx(12e-3));
  CHECK(untimed.cost_after == Approx(12e-3));
}

}  // namespace
}  // namespace taso
