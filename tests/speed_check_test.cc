// Never slower, measured (src/pipeline/speed_check.h): with a stand-in runtime whose
// times the test sets, a rewrite that makes the model slower there is dropped before the
// model is returned, and one that makes it faster is kept.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "pipeline/speed_check.h"
#include "rule_lookup.h"
#include "stand_in_runtime.h"
#include "taso/backends/executor_timer.h"
#include "taso/ir/ops/names.h"
#include "taso/ir/status_macros.h"
#include "taso/pipeline/pipeline.h"
#include "taso/rewrite/search.h"
#include "test_util.h"

using namespace taso;
using testing::AddOp;
using testing::AddWeight;

namespace {

// Two products of one input, added: the search makes them one product (x w1 + x w2 as
// x (w1 + w2)).
OnnxModel TwoProducts() {
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {64, 256});
  REQUIRE(x.ok());
  const ValueId w1 = AddWeight(g, "w1", {256, 256}, 1), w2 = AddWeight(g, "w2", {256, 256}, 2);
  const ValueId a = AddOp(g, op_names::kMatMul, {*x, w1}, "m1"), b = AddOp(g, op_names::kMatMul, {*x, w2}, "m2");
  REQUIRE(g.AddOutput(AddOp(g, op_names::kAdd, {a, b}, "y")).ok());
  return NewOnnxModel(std::move(g));
}

// A runtime where a model with the input's operators takes 1 ms and any other
// `rewritten_ms`; no spread.
testing::PricedRuntime StandInRuntime(std::multiset<std::string> input_ops, double rewritten_ms) {
  return testing::PricedRuntime([input_ops = std::move(input_ops), rewritten_ms](const Graph& g) {
    return testing::OperatorNames(g) == input_ops ? 1.0 : rewritten_ms;
  });
}

PipelineOptions StandInOptions(RuntimeTimer* timer) {
  PipelineOptions options;
  options.backend = Backend::kAnalytic;
  options.search = SearchKind::kSubstitutions;
  options.engine = SearchEngine::kBacktracking;
  options.search_options.budget = 10;
  options.verify_speed = true;
  options.timer = timer;
  return options;
}

}  // namespace

TEST_CASE("A rewrite that makes the target runtime slower is dropped before writing", "[speed_check]") {
  const OnnxModel model = TwoProducts();
  testing::PricedRuntime runtime = StandInRuntime(testing::OperatorNames(model.graph), 1.5);
  absl::StatusOr<PipelineResult> r = OptimizeModel(model, testing::ShippedRules().rules, StandInOptions(&runtime));
  REQUIRE(r.ok());
  REQUIRE(r->speed_check.has_value());
  REQUIRE(r->speed_check->rewrites > 0);  // the search rewrote the graph
  CHECK(r->speed_check->rewrites_kept == 0);
  CHECK(r->speed_check->kept_input);
  CHECK(r->search.rules_applied.empty());
  CHECK(testing::OperatorNames(r->model.graph) == testing::OperatorNames(model.graph));
  CHECK(r->speed_check->timing.a_seconds == Approx(1e-3));
  CHECK(r->speed_check->timing.b_seconds == Approx(1e-3));
  CHECK(runtime.comparisons == r->speed_check->comparisons);
  CHECK_THAT(SummaryText(StandInOptions(&runtime), *r, "m"), Catch::Contains("the input is written"));
  CHECK_THAT(JsonReport(StandInOptions(&runtime), *r), Catch::Contains("\"kept_input\": true"));
}

TEST_CASE("A rewrite that makes the target runtime faster is kept", "[speed_check]") {
  const OnnxModel model = TwoProducts();
  testing::PricedRuntime runtime = StandInRuntime(testing::OperatorNames(model.graph), 0.5);
  absl::StatusOr<PipelineResult> r = OptimizeModel(model, testing::ShippedRules().rules, StandInOptions(&runtime));
  REQUIRE(r.ok());
  REQUIRE(r->speed_check.has_value());
  REQUIRE(r->speed_check->rewrites > 0);
  CHECK(r->speed_check->rewrites_kept == r->speed_check->rewrites);
  CHECK_FALSE(r->speed_check->kept_input);
  CHECK(r->speed_check->comparisons == 1);  // faster at once: nothing to drop
  CHECK_FALSE(r->search.rules_applied.empty());
  CHECK(testing::OperatorNames(r->model.graph) != testing::OperatorNames(model.graph));
  CHECK(r->speed_check->timing.ratio() == Approx(2.0));
}

TEST_CASE("A rewrite the speed check keeps but whose own estimate is slower is not written", "[speed_check]") {
  // The whole models time faster with the rewrite; its region, timed apart, slower: the
  // two measurements disagree, and the input as read is the safe one to write.
  const OnnxModel model = TwoProducts();
  testing::PricedRuntime whole = StandInRuntime(testing::OperatorNames(model.graph), 0.5);
  testing::PricedRuntime regions = StandInRuntime(testing::OperatorNames(model.graph), 1.5);
  PipelineOptions options = StandInOptions(&whole);
  options.region_timer = &regions;
  absl::StatusOr<PipelineResult> r = OptimizeModel(model, testing::ShippedRules().rules, options);
  REQUIRE(r.ok());
  REQUIRE(r->speed_check.has_value());
  CHECK(r->speed_check->rewrites_kept > 0);
  REQUIRE(r->region_estimate.has_value());
  REQUIRE(r->estimated_slower.has_value());
  CHECK(r->estimated_slower->rewritten_seconds > r->estimated_slower->input_seconds);
  CHECK(r->search.rules_applied.empty());
  CHECK(testing::OperatorNames(r->model.graph) == testing::OperatorNames(model.graph));
  CHECK_FALSE(r->cost_after < r->cost_before);
  const std::string summary = SummaryText(options, *r, "m");
  CHECK_THAT(summary, Catch::Contains("none kept: priced") &&
                          Catch::Contains("its estimate prices it above the input: the input is written as read"));
  CHECK_THAT(summary, !Catch::Contains("  verified ("));  // the model timed is not the one written
  PipelineResult other_graph_chosen = *r;                 // as where the speed check chose another extraction
  other_graph_chosen.speed_check->extraction = "analytic";
  CHECK_THAT(SummaryText(options, other_graph_chosen, "m"), !Catch::Contains(" is written: measurably"));
  CHECK_THAT(JsonReport(options, *r), Catch::Contains("\"estimated_slower\": {\"rewritten_ms\": "));
}

TEST_CASE("Where its regions are not timed, the speed check's times are the output's estimate", "[speed_check]") {
  const OnnxModel model = TwoProducts();
  testing::PricedRuntime runtime = StandInRuntime(testing::OperatorNames(model.graph), 0.5);
  absl::StatusOr<PipelineResult> r = OptimizeModel(model, testing::ShippedRules().rules, StandInOptions(&runtime));
  REQUIRE(r.ok());
  REQUIRE(r->speed_check.has_value());
  CHECK_FALSE(r->region_estimate.has_value());
  CHECK_FALSE(r->search.rules_applied.empty());
  CHECK(r->cost_before == Approx(1e-3));
  CHECK(r->cost_after == Approx(0.5e-3));
}

namespace {

// The options of a run without the speed check, whose regions `runtime` times.
PipelineOptions UnverifiedOptions(RuntimeTimer* runtime) {
  PipelineOptions options = StandInOptions(runtime);
  options.verify_speed = false;
  return options;
}

}  // namespace

TEST_CASE("Where no rewrite is written, the input is written as read, not as the search cleaned it up",
          "[speed_check]") {
  // A convolution, its batch normalization and relu: the clean-up would fold the last two
  // into the convolution, which the cuda executor then ran slower (ResNet-50 at 0.89x).
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {1, 3, 8, 8});
  REQUIRE(x.ok());
  const ValueId conv = AddOp(g, op_names::kConv2D, {*x, AddWeight(g, "w", {4, 3, 3, 3}, 1)}, "conv",
                             Params().Set("pads", std::vector<int64_t>{1, 1, 1, 1}));
  std::vector<ValueId> bn_inputs = {conv};
  for (int i = 0; i < 4; ++i) bn_inputs.push_back(AddWeight(g, "bn" + std::to_string(i), {4}, 2 + i));
  bn_inputs[4] = AddOp(g, op_names::kRelu, {bn_inputs[4]}, "variance");  // a weight-only node, folded
  REQUIRE(g.AddOutput(AddOp(g, op_names::kRelu, {AddOp(g, op_names::kBatchNormalization, bn_inputs, "bn")}, "y")).ok());
  const OnnxModel model = NewOnnxModel(std::move(g));
  testing::PricedRuntime runtime = StandInRuntime(testing::OperatorNames(model.graph), 1.5);
  for (bool verify_speed : {false, true}) {
    PipelineOptions options = StandInOptions(&runtime);
    options.verify_speed = verify_speed;
    absl::StatusOr<PipelineResult> r = OptimizeModel(model, testing::ShippedRules().rules, options);
    REQUIRE(r.ok());
    REQUIRE(r->search.rules_applied.empty());
    std::multiset<std::string> written = testing::OperatorNames(r->model.graph),
                               expected = testing::OperatorNames(model.graph);
    expected.erase(expected.find(op_names::kRelu));  // the variance's, folded into a weight
    CHECK(written == expected);
    CHECK(r->cost_after == Approx(r->cost_before));
    REQUIRE(r->self_check.has_value());
    CHECK(r->self_check->mismatch.empty());
  }
}

namespace {

// Every node 1 us, but Gelu 100 us: as on the cuda target when Gelu had no cuda kernel.
class GeluHeavyCost : public CostModel {
 public:
  std::string name() const override { return "gelu-heavy"; }
  double NodeCost(const Graph& g, NodeId n) override { return g.node(n).op->name() == op_names::kGelu ? 1e-4 : 1e-6; }
};

}  // namespace

TEST_CASE("Without the speed check, rewrites priced above the input as read are not written", "[speed_check]") {
  // TwoProducts' sum through GELU spelled out: the search starts from its fused Gelu,
  // merges the products (cheaper than where it started) and stays priced far above the
  // input as read, whose GELU is five cheap nodes.
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {64, 256});
  REQUIRE(x.ok());
  const ValueId w1 = AddWeight(g, "w1", {256, 256}, 1), w2 = AddWeight(g, "w2", {256, 256}, 2);
  const ValueId sum =
      AddOp(g, op_names::kAdd,
            {AddOp(g, op_names::kMatMul, {*x, w1}, "m1"), AddOp(g, op_names::kMatMul, {*x, w2}, "m2")}, "sum");
  auto scalar = [&](const char* name, float v) { return *g.AddWeight(name, TensorData::Float({}, {v})); };
  const ValueId erf =
      AddOp(g, op_names::kErf, {AddOp(g, op_names::kDiv, {sum, scalar("sqrt2", 1.41421356f)}, "scaled")}, "erf");
  const ValueId one_plus = AddOp(g, op_names::kAdd, {erf, scalar("one", 1)}, "one_plus");
  REQUIRE(g.AddOutput(AddOp(g, op_names::kScalarMul,
                            {AddOp(g, op_names::kMul, {sum, one_plus}, "p"), scalar("half", 0.5f)}, "y"))
              .ok());
  const OnnxModel model = NewOnnxModel(std::move(g));
  GeluHeavyCost prices;
  PipelineOptions options = StandInOptions(nullptr);
  options.engine = SearchEngine::kEGraph;
  options.cost_model = &prices;
  options.verify_speed = false;
  absl::StatusOr<PipelineResult> r = OptimizeModel(model, testing::ShippedRules().rules, options);
  REQUIRE(r.ok());
  INFO(SummaryText(options, *r, "m"));
  REQUIRE(r->estimated_slower.has_value());
  CHECK(r->estimated_slower->rewritten_seconds > r->estimated_slower->input_seconds);
  CHECK(r->search.rules_applied.empty());
  CHECK(testing::OperatorNames(r->model.graph) == testing::OperatorNames(model.graph));
  CHECK(r->cost_after == Approx(r->cost_before));
  CHECK_THAT(SummaryText(options, *r, "m"), Catch::Contains("none kept: priced"));
}

TEST_CASE("Without the speed check, a graph whose differing region times slower gives way to the input",
          "[speed_check]") {
  const OnnxModel model = TwoProducts();
  testing::PricedRuntime runtime = StandInRuntime(testing::OperatorNames(model.graph), 1.5);
  const PipelineOptions options = UnverifiedOptions(&runtime);
  absl::StatusOr<PipelineResult> r = OptimizeModel(model, testing::ShippedRules().rules, options);
  REQUIRE(r.ok());
  CHECK_FALSE(r->speed_check.has_value());
  REQUIRE(r->region_estimate.has_value());
  CHECK(r->region_estimate->input_written);
  CHECK(r->region_estimate->timing.ratio() == Approx(1 / 1.5));
  CHECK(r->search.rules_applied.empty());
  CHECK(testing::OperatorNames(r->model.graph) == testing::OperatorNames(model.graph));
  CHECK(r->cost_after == Approx(r->cost_before));
  CHECK(runtime.comparisons == 2);  // the regions, and the input against its region
  const std::string text = SummaryText(options, *r, "m");
  CHECK_THAT(text, Catch::Contains("ran measurably slower") && Catch::Contains("the input is written"));
  CHECK_THAT(JsonReport(options, *r), Catch::Contains("\"input_written\": true"));
}

TEST_CASE("Without the speed check, a graph whose differing region times faster is written", "[speed_check]") {
  const OnnxModel model = TwoProducts();
  testing::PricedRuntime runtime = StandInRuntime(testing::OperatorNames(model.graph), 0.5);
  absl::StatusOr<PipelineResult> r = OptimizeModel(model, testing::ShippedRules().rules, UnverifiedOptions(&runtime));
  REQUIRE(r.ok());
  REQUIRE(r->region_estimate.has_value());
  CHECK_FALSE(r->region_estimate->input_written);
  CHECK_FALSE(r->search.rules_applied.empty());
  CHECK(testing::OperatorNames(r->model.graph) != testing::OperatorNames(model.graph));
  // Priced as the input less the 0.5 ms its region saves.
  CHECK(r->cost_before - r->cost_after == Approx(0.5e-3));
}

TEST_CASE("Only the rewrites that help are kept, a rule's group at a time", "[speed_check]") {
  // Three rewrites in two groups; the model is faster with group "keep" and slower with "drop".
  const std::vector<std::string> groups = {"drop", "keep", "drop"};
  auto build = [&](const std::vector<bool>& keep) -> absl::StatusOr<OnnxModel> {
    OnnxModel m = NewOnnxModel(Graph());
    // The time is carried in the input's shape: 100 less 10 per "keep", plus 5 per "drop".
    int64_t size = 100;
    for (size_t i = 0; i < keep.size(); ++i)
      if (keep[i]) size += groups[i] == "keep" ? -10 : 5;
    REQUIRE(m.graph.AddInput("x", DataType::kFloat32, {size}).ok());
    return m;
  };
  class BySize : public RuntimeTimer {
   public:
    std::string name() const override { return "by size"; }
    absl::StatusOr<PairTiming> Compare(const OnnxModel& a, const OnnxModel& b) override {
      return PairTiming{.a_seconds = Size(a), .b_seconds = Size(b), .pairs = 4, .runs = 40, .spread = 0.01};
    }
    static double Size(const OnnxModel& m) { return static_cast<double>(m.graph.value(m.graph.inputs()[0]).shape[0]); }
  } timer;
  const absl::StatusOr<OnnxModel> input = build(std::vector<bool>(groups.size(), false));
  REQUIRE(input.ok());
  absl::StatusOr<pipeline::SpeedChoice> choice = pipeline::ChooseFasterRewrites(timer, *input, groups, build);
  REQUIRE(choice.ok());
  CHECK(choice->keep == std::vector<bool>{false, true, false});
  CHECK(choice->check.rewrites_kept == 1);
  CHECK(choice->check.timing.ratio() == Approx(100.0 / 90.0));
}

namespace {

// Three rewrites in two groups, "a" and "b", each making the model faster (its time is
// carried in the input's shape: 100 less 10 per rewrite kept).
const std::vector<std::string> kTwoGroups = {"a", "b", "b"};

absl::StatusOr<OnnxModel> BuildBySize(const std::vector<bool>& keep) {
  OnnxModel m = NewOnnxModel(Graph());
  const int64_t size = 100 - 10 * std::count(keep.begin(), keep.end(), true);
  RETURN_IF_ERROR(m.graph.AddInput("x", DataType::kFloat32, {size}).status());
  return m;
}

// Times models by their size; the first comparison cannot resolve anything, and the time
// is spent after `comparisons_in_time` comparisons.
class SizeTimerOutOfTime : public RuntimeTimer {
 public:
  explicit SizeTimerOutOfTime(int comparisons_in_time) : in_time_(comparisons_in_time) {}
  std::string name() const override { return "by size, briefly"; }
  absl::StatusOr<PairTiming> Compare(const OnnxModel& a, const OnnxModel& b) override {
    const double spread = comparisons++ == 0 ? 1.0 : 0.01;
    return PairTiming{.a_seconds = Size(a), .b_seconds = Size(b), .pairs = 2, .runs = 20, .spread = spread};
  }
  bool OutOfTime() const override { return comparisons >= in_time_; }
  int comparisons = 0;

 private:
  static double Size(const OnnxModel& m) { return static_cast<double>(m.graph.value(m.graph.inputs()[0]).shape[0]); }
  int in_time_;
};

}  // namespace

TEST_CASE("Once the speed check's time is spent, the groups not timed yet are dropped", "[speed_check]") {
  SizeTimerOutOfTime timer(2);
  const absl::StatusOr<OnnxModel> input = BuildBySize({false, false, false});
  REQUIRE(input.ok());
  absl::StatusOr<pipeline::SpeedChoice> choice = pipeline::ChooseFasterRewrites(timer, *input, kTwoGroups, BuildBySize);
  REQUIRE(choice.ok());
  // "a" was timed (and helps); "b", which would help too, was not.
  CHECK(choice->keep == std::vector<bool>{true, false, false});
  CHECK(choice->check.groups_dropped_untimed == 1);
  CHECK_FALSE(choice->check.written_untimed);
  CHECK(choice->check.timing.ratio() == Approx(100.0 / 90.0));  // the model kept, timed once more
  CHECK(timer.comparisons == 3);
}

TEST_CASE("With no time for any group, the input is written and the report says it was not timed", "[speed_check]") {
  SizeTimerOutOfTime timer(1);
  const absl::StatusOr<OnnxModel> input = BuildBySize({false, false, false});
  REQUIRE(input.ok());
  absl::StatusOr<pipeline::SpeedChoice> choice = pipeline::ChooseFasterRewrites(timer, *input, kTwoGroups, BuildBySize);
  REQUIRE(choice.ok());
  CHECK(choice->keep == std::vector<bool>(3, false));
  CHECK(choice->check.kept_input);
  CHECK(choice->check.written_untimed);
  CHECK(choice->check.groups_dropped_untimed == 2);
  CHECK(timer.comparisons == 1);
  PipelineResult result;
  result.speed_check = choice->check;
  const std::string text = SummaryText(PipelineOptions(), result, "m");
  CHECK_THAT(text, Catch::Contains("the input against a rewritten model") &&
                       Catch::Contains("written as read (itself not timed:") &&
                       Catch::Contains("2 group(s) of rewrites dropped untimed"));
  CHECK_THAT(text, !Catch::Contains("verified ("));
}

TEST_CASE("One group not faster is timed once, then the input's graph for the report", "[speed_check]") {
  SizeTimerOutOfTime timer(100);
  auto slower = [](const std::vector<bool>& keep) -> absl::StatusOr<OnnxModel> {
    OnnxModel m = NewOnnxModel(Graph());
    RETURN_IF_ERROR(m.graph.AddInput("x", DataType::kFloat32, {keep[0] ? 110 : 100}).status());
    return m;
  };
  const absl::StatusOr<OnnxModel> input = slower({false});
  REQUIRE(input.ok());
  absl::StatusOr<pipeline::SpeedChoice> choice = pipeline::ChooseFasterRewrites(timer, *input, {"only"}, slower);
  REQUIRE(choice.ok());
  CHECK(choice->keep == std::vector<bool>{false});
  CHECK(timer.comparisons == 2);
  CHECK(choice->check.timing.ratio() == Approx(1.0));
  choice =
      pipeline::ChooseFasterRewrites(timer, *input, {"only"}, slower, pipeline::WhenNoneKept::kReportTheLastTiming);
  REQUIRE(choice.ok());
  CHECK(timer.comparisons == 3);
  CHECK(choice->check.timing.ratio() == Approx(100.0 / 110.0));
}

TEST_CASE("A difference within the spread is not taken as a gain", "[speed_check]") {
  PairTiming t{.a_seconds = 1.01, .b_seconds = 1.0, .pairs = 4, .runs = 40, .spread = 0.02};
  CHECK_FALSE(t.Resolved());
  CHECK_FALSE(t.SecondFaster());
  t.spread = 0.005;
  CHECK(t.SecondFaster());
  t.a_seconds = 0.9;
  CHECK(t.Resolved());
  CHECK_FALSE(t.SecondFaster());
}

TEST_CASE("The search's rewrites replay on its input, all of them or none", "[speed_check]") {
  const OnnxModel model = TwoProducts();
  const std::vector<RuleMatcher> matchers = PrepareRules(testing::ShippedRules().rules);
  AnalyticCost cost;
  SearchOptions options;
  options.budget = 10;
  const SearchResult search = Optimize(model.graph, matchers, cost, options);
  REQUIRE_FALSE(search.path.empty());
  int recorded = 0;
  for (const auto& [rule, n] : search.rules_applied) recorded += n;
  CHECK(recorded == static_cast<int>(search.path.size()));
  std::map<std::string, int> applied;
  absl::StatusOr<Graph> all =
      ReplayRewrites(model.graph, matchers, search.path, std::vector<bool>(search.path.size(), true), &applied);
  REQUIRE(all.ok());
  CHECK(all->StructuralHash() == search.best.StructuralHash());
  CHECK(applied == search.rules_applied);
  absl::StatusOr<Graph> none =
      ReplayRewrites(model.graph, matchers, search.path, std::vector<bool>(search.path.size(), false));
  REQUIRE(none.ok());
  CHECK(none->StructuralHash() == model.graph.StructuralHash());
}

namespace {

// A runtime whose times are the analytic model's estimates, or their inverses.
testing::PricedRuntime AnalyticRuntime(bool inverted) {
  return testing::PricedRuntime([inverted](const Graph& g) {
    const double seconds = AnalyticCost().TotalCost(g);
    return (inverted ? 1e-9 / seconds : seconds) * 1e3;
  });
}

// The e-graph engine with node-count prices, which keep the chain as it is: the analytic
// model's extraction is the other one the speed check may time.
PipelineOptions NodeCountEGraphOptions(RuntimeTimer* timer, CostModel* prices) {
  PipelineOptions options = StandInOptions(timer);
  options.engine = SearchEngine::kEGraph;
  options.cost_model = prices;
  return options;
}

// testing::ProductChain through the pipeline with those options, `runtime` timing it.
absl::StatusOr<PipelineResult> OptimizeChain(RuntimeTimer& runtime) {
  testing::NodeCountCost prices;
  return OptimizeModel(NewOnnxModel(testing::ProductChain()), testing::ShippedRules().rules,
                       NodeCountEGraphOptions(&runtime, &prices));
}

}  // namespace

TEST_CASE("Where the search's graph is not faster, the e-graph's other extraction is timed and kept if faster",
          "[speed_check]") {
  const OnnxModel model = NewOnnxModel(testing::ProductChain());
  testing::PricedRuntime runtime = AnalyticRuntime(/*inverted=*/false);
  absl::StatusOr<PipelineResult> r = OptimizeChain(runtime);
  REQUIRE(r.ok());
  REQUIRE(r->speed_check.has_value());
  CHECK(r->speed_check->extraction == "analytic");
  CHECK(r->speed_check->other_extractions_timed == 1);
  CHECK(r->speed_check->timing.SecondFaster());
  CHECK_FALSE(r->search.rules_applied.empty());
  CHECK(AnalyticCost().TotalCost(r->model.graph) < AnalyticCost().TotalCost(model.graph) / 4);
  REQUIRE(r->self_check.has_value());
  CHECK(r->self_check->mismatch.empty());
}

TEST_CASE("Where the search's graph is faster, an other extraction faster still is written", "[speed_check]") {
  // The chain, and beside it two products of one input: node-count prices merge the
  // products (the search's graph: faster than the input) and keep the chain; the
  // analytic model's extraction also re-associates the chain (faster still).
  Graph g = testing::ProductChain();
  const ValueId q = *g.AddInput("q", DataType::kFloat32, {64, 256});
  const ValueId w1 = AddWeight(g, "w1", {256, 256}, 1), w2 = AddWeight(g, "w2", {256, 256}, 2);
  REQUIRE(g.AddOutput(AddOp(g, op_names::kAdd,
                            {AddOp(g, op_names::kMatMul, {q, w1}, "m1"), AddOp(g, op_names::kMatMul, {q, w2}, "m2")},
                            "sum"))
              .ok());
  const OnnxModel model = NewOnnxModel(g);
  testing::PricedRuntime runtime = AnalyticRuntime(/*inverted=*/false);
  testing::NodeCountCost prices;
  absl::StatusOr<PipelineResult> r =
      OptimizeModel(model, testing::ShippedRules().rules, NodeCountEGraphOptions(&runtime, &prices));
  REQUIRE(r.ok());
  REQUIRE(r->speed_check.has_value());
  CHECK(r->speed_check->extraction == "analytic");
  CHECK(r->speed_check->other_extractions_timed == 1);
  CHECK(r->speed_check->comparisons >= 3);  // the search's graph, then the other against it and the input
  CHECK(r->speed_check->beat_search);
  CHECK_THAT(SummaryText(NodeCountEGraphOptions(&runtime, &prices), *r, "m"),
             Catch::Contains("measurably faster than the e-graph's extraction by the target's costs"));
  CHECK_THAT(JsonReport(NodeCountEGraphOptions(&runtime, &prices), *r), Catch::Contains("\"beat_search\": true"));
  CHECK(r->speed_check->timing.SecondFaster());
  // Both changes are in: one product for the pair, and the chain's cheaper order.
  CHECK(testing::CountOps(r->model.graph, op_names::kMatMul) == 3);
  CHECK(AnalyticCost().TotalCost(r->model.graph) < AnalyticCost().TotalCost(model.graph) / 2);
  REQUIRE(r->self_check.has_value());
  CHECK(r->self_check->mismatch.empty());
}

TEST_CASE("An other extraction that is not faster in the runtime is not written", "[speed_check]") {
  const OnnxModel model = NewOnnxModel(testing::ProductChain());
  testing::PricedRuntime runtime = AnalyticRuntime(/*inverted=*/true);
  absl::StatusOr<PipelineResult> r = OptimizeChain(runtime);
  REQUIRE(r.ok());
  REQUIRE(r->speed_check.has_value());
  CHECK(r->speed_check->extraction.empty());
  CHECK(r->speed_check->other_extractions_timed == 1);
  CHECK(r->speed_check->kept_input);
  CHECK(r->search.rules_applied.empty());
  CHECK(r->model.graph.StructuralHash() == model.graph.StructuralHash());
}

TEST_CASE("A stand-in cost model replaces the analytic backend's only", "[speed_check]") {
  testing::NodeCountCost prices;
  PipelineOptions options = NodeCountEGraphOptions(nullptr, &prices);
  options.backend = Backend::kCpu;
  absl::StatusOr<PipelineResult> r =
      OptimizeModel(NewOnnxModel(testing::ProductChain()), testing::ShippedRules().rules, options);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(std::string(r.status().message()), Catch::Contains("stand-in cost model"));
}

namespace {

// TwoProducts with its sum read by a node outside the operator library (an Erf written
// under another domain, which no executor of ours runs).
OnnxModel TwoProductsThenOpaque() {
  OnnxModel model = TwoProducts();
  Graph& g = model.graph;
  auto proto = std::make_shared<onnx::NodeProto>();
  proto->set_name("custom");
  proto->set_op_type(op_names::kErf);
  proto->set_domain("com.example");
  proto->add_input("y");
  proto->add_output("z");
  const ValueId y = g.FindValue("y");
  auto z = g.AddOpaqueNode(proto, {y}, {"z"}, {OutputType{DataType::kFloat32, {64, 256}}});
  REQUIRE(z.ok());
  REQUIRE(g.AddOutput((*z)[0]).ok());
  return model;
}

}  // namespace

TEST_CASE("Our cpu executor times two models in pairs made in both orders", "[speed_check]") {
  const OnnxModel model = TwoProducts();
  ExecutorTimer timer("cpu", PairLimits{.first_rounds = 3, .max_rounds = 3, .first_pairs = 2, .max_pairs = 4});
  CHECK(timer.name() == "taso's cpu executor");
  absl::StatusOr<PairTiming> t = timer.Compare(model, model);
  REQUIRE(t.ok());
  CHECK(t->pairs >= 2);
  CHECK(t->pairs <= 4);
  CHECK(t->pairs % 2 == 0);  // two a request, one made in each order
  CHECK(t->runs == 3 * t->pairs);
  CHECK(t->a_seconds > 0);
  CHECK(t->b_seconds > 0);
  CHECK(std::isfinite(t->spread));

  absl::StatusOr<PairTiming> opaque = timer.Compare(model, TwoProductsThenOpaque());
  CHECK_FALSE(opaque.ok());
}

TEST_CASE("Our cpu executor times a model against a region of it, which reads what the model computes",
          "[speed_check]") {
  Graph region;
  const ValueId m1 = *region.AddInput("m1", DataType::kFloat32, {64, 256});
  const ValueId m2 = *region.AddInput("m2", DataType::kFloat32, {64, 256});
  REQUIRE(region.AddOutput(AddOp(region, op_names::kAdd, {m1, m2}, "y")).ok());
  ExecutorTimer timer("cpu", PairLimits{.first_rounds = 3, .max_rounds = 3, .first_pairs = 2, .max_pairs = 2});
  absl::StatusOr<PairTiming> t = timer.Compare(TwoProducts(), NewOnnxModel(std::move(region)));
  REQUIRE(t.ok());
  CHECK(t->a_seconds > t->b_seconds);  // two 64x256x256 products and the Add, against the Add
}

TEST_CASE("On the cpu backend the estimates are the input's time in the cpu executor", "[speed_check]") {
  PipelineOptions options = StandInOptions(nullptr);
  options.target = Target::kCpu;
  options.backend = Backend::kCpu;
  options.cost_cache = "none";
  options.verify_speed_seconds = 2;
  absl::StatusOr<PipelineResult> r = OptimizeModel(TwoProducts(), testing::ShippedRules().rules, options);
  REQUIRE(r.ok());
  // The search prices with kernels timed now: on a loaded machine they can say that no
  // rewrite pays, and then nothing is applied and nothing timed.
  if (!r->speed_check) {
    CHECK(r->search.rules_applied.empty());
    WARN("the search applied no rule: the estimates were not timed");
    return;
  }
  // Whether or not a rewrite was kept, the input's estimate is its time as timed, and
  // the one by operators is kept beside it.
  REQUIRE(r->region_estimate.has_value());
  CHECK(r->region_estimate->input_timed);
  CHECK(r->cost_before == r->speed_check->timing.a_seconds);
  CHECK(r->region_estimate->cost_before_by_operators > 0);
  if (r->search.rules_applied.empty()) CHECK(r->cost_after == r->cost_before);
}

TEST_CASE("On the cpu target the speed check times the model on the cpu executor", "[speed_check]") {
  PipelineOptions options = StandInOptions(nullptr);
  options.target = Target::kCpu;
  options.verify_speed_seconds = 2;
  absl::StatusOr<PipelineResult> r = OptimizeModel(TwoProducts(), testing::ShippedRules().rules, options);
  REQUIRE(r.ok());
  REQUIRE(r->speed_check.has_value());
  CHECK(r->speed_check->runtime == "taso's cpu executor");
  CHECK(r->speed_check->timing.pairs >= 2);
  CHECK(r->speed_check->timing.a_seconds > 0);
  // Whichever way the timing went, the rewrites kept are those it found faster.
  if (r->speed_check->rewrites_kept == 0) CHECK(r->search.rules_applied.empty());
}

TEST_CASE("On the cpu target a model the executor cannot run is written as read, not refused", "[speed_check]") {
  PipelineOptions options = StandInOptions(nullptr);
  options.target = Target::kCpu;
  options.verify_speed = false;
  absl::StatusOr<PipelineResult> by_estimate =
      OptimizeModel(TwoProductsThenOpaque(), testing::ShippedRules().rules, options);
  REQUIRE(by_estimate.ok());
  REQUIRE_FALSE(by_estimate->search.rules_applied.empty());  // the products merged, on the estimate alone
  CHECK(by_estimate->speed_not_verified.empty());

  // Asked to verify the speed, it cannot time the rewrite (the executor runs no node
  // outside the operator library), so it writes none, and says why.
  options.verify_speed = true;
  absl::StatusOr<PipelineResult> r = OptimizeModel(TwoProductsThenOpaque(), testing::ShippedRules().rules, options);
  REQUIRE(r.ok());
  CHECK_FALSE(r->speed_check.has_value());
  CHECK(r->search.rules_applied.empty());
  CHECK(r->cost_after == r->cost_before);
  CHECK(r->model.graph.num_nodes() == TwoProductsThenOpaque().graph.num_nodes());
  CHECK_THAT(r->speed_not_verified, Catch::Contains("cpu executor cannot run the input: node 'custom'"));
  const std::string summary = SummaryText(options, *r, "m.onnx");
  CHECK_THAT(summary, Catch::Contains("speed check: NOT POSSIBLE: our cpu executor cannot run the input"));
  CHECK_THAT(summary, Catch::Contains("verified (cpu)       NOT POSSIBLE: the input is written as read"));
  CHECK_THAT(JsonReport(options, *r), Catch::Contains("\"speed_not_verified\": \"our cpu executor cannot run"));
  CHECK_THAT(JsonReport(options, *by_estimate), Catch::Contains("\"speed_not_verified\": null"));
}

TEST_CASE("A timer that fails leaves the input written as read and says why", "[speed_check]") {
  // As ONNX Runtime's worker does when the system ends it for its memory.
  class Failing : public RuntimeTimer {
   public:
    std::string name() const override { return "stand-in"; }
    absl::StatusOr<PairTiming> Compare(const OnnxModel&, const OnnxModel&) override {
      ++comparisons;
      return absl::UnavailableError("the worker exited");
    }
    int comparisons = 0;
  } failing;
  const OnnxModel model = TwoProducts();
  const PipelineOptions options = StandInOptions(&failing);
  absl::StatusOr<PipelineResult> r = OptimizeModel(model, testing::ShippedRules().rules, options);
  REQUIRE(r.ok());
  CHECK(failing.comparisons > 0);  // the search rewrote the graph, and its timing failed
  CHECK(r->search.rules_applied.empty());
  CHECK(testing::OperatorNames(r->model.graph) == testing::OperatorNames(model.graph));
  CHECK(r->speed_not_verified == "stand-in could not time the models: the worker exited");
  CHECK_THAT(SummaryText(options, *r, "m"),
             Catch::Contains("speed check: NOT POSSIBLE: stand-in could not time the models: the worker exited; the "
                             "input is written as read"));
}
