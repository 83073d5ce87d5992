// The matcher, rewriter, weight folding and search: multi-output rules applied, illegal
// matches and cycles refused, and every rewrite computing what the original computes.
#include <catch2/catch.hpp>

#include "models/models.h"
#include "rule_lookup.h"
#include "taso/ir/executor.h"
#include "taso/ir/ops/names.h"
#include "taso/onnx/onnx_io.h"
#include "taso/passes/fold.h"
#include "taso/passes/inference_fusion.h"
#include "taso/rewrite/cost.h"
#include "taso/rewrite/match.h"
#include "taso/rewrite/search.h"
#include "test_util.h"

using namespace taso;

namespace {

// Two MatMuls sharing their left operand B become one MatMul of B by the right operands
// concatenated, split back into the two products.
const Rule& MergeMatMulsRule() {
  return testing::ShippedRuleLike("MatMul(B, A), MatMul(B, C)",
                                  "Split(MatMul(B, Concat(A, C)))[0], Split(MatMul(B, Concat(A, C)))[1]", 2);
}

using testing::AddOp;
using testing::AddWeight;
using testing::ShippedRules;

void ExpectSameOutputs(const Graph& a, const Graph& b) {
  const TensorMap inputs = RandomInputs(a, 7);
  auto x = RunReference(a, inputs);
  auto y = RunReference(b, inputs);
  REQUIRE(x.ok());
  REQUIRE(y.ok());
  CHECK(MaxAbsDifference(*x, *y) < 1e-4);
}

std::vector<std::string> OpNames(const Graph& g) {
  std::vector<std::string> names;
  for (NodeId n = 0; n < g.num_nodes(); ++n) names.push_back(std::string(g.node(n).op->name()));
  return names;
}

// relu(relu(A)) -> relu(A): the inner relu's output is inside the pattern.
Rule ReluTwice() {
  Rule r;
  r.name = "relu_twice";
  r.inputs = {{"A", {4, 4}, false}};
  RuleOp relu;
  relu.op = testing::Op(op_names::kRelu);
  relu.inputs = {0};
  r.source.ops = {relu, relu};
  r.source.ops[1].inputs = {1};
  r.source.outputs = {2};
  r.target.ops = {relu};
  r.target.outputs = {1};
  return r;
}

}  // namespace

TEST_CASE("Two MatMuls sharing an input become one MatMul on concatenated weights") {
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {8, 16});
  REQUIRE(x.ok());
  const ValueId w1 = AddWeight(g, "w1", {16, 32}, 1), w2 = AddWeight(g, "w2", {16, 24}, 2);
  REQUIRE(g.AddOutput(AddOp(g, op_names::kMatMul, {*x, w1}, "y1")).ok());
  REQUIRE(g.AddOutput(AddOp(g, op_names::kMatMul, {*x, w2}, "y2")).ok());

  auto rule = RuleMatcher::Create(MergeMatMulsRule());
  REQUIRE(rule.ok());
  const std::vector<Match> matches = rule->FindAll(g, GraphIndex(g));
  REQUIRE(matches.size() == 2);  // either MatMul can be the first
  auto fused = ApplyMatch(g, *rule, matches[0]);
  REQUIRE(fused.ok());
  CHECK(OpNames(*fused) == std::vector<std::string>{op_names::kConcat, op_names::kMatMul, op_names::kSplit});
  // The outputs keep their names and shapes; the weights now feed the concatenation.
  CHECK(fused->value(fused->outputs()[0]).name == "y1");
  CHECK(fused->value(fused->outputs()[1]).shape == Shape{8, 24});
  ExpectSameOutputs(g, *fused);
}

TEST_CASE("A target operator with two new outputs names them apart") {
  // A + B written as the sum of the two halves of Concat(B, A): the split's two outputs
  // are new values.
  Graph g;
  auto a = g.AddInput("a", DataType::kFloat32, {4, 4});
  auto b = g.AddInput("b", DataType::kFloat32, {4, 4});
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(g.AddOutput(AddOp(g, op_names::kAdd, {*a, *b}, "sum")).ok());
  auto rule = RuleMatcher::Create(
      testing::ShippedRuleLike("Add(A, B)", "Add(Split(Concat{axis=0}(B, A))[0], Split(Concat(B, A))[1])", 2));
  REQUIRE(rule.ok());
  const std::vector<Match> matches = rule->FindAll(g, GraphIndex(g));
  REQUIRE(!matches.empty());
  auto rewritten = ApplyMatch(g, *rule, matches[0]);
  REQUIRE(rewritten.ok());
  REQUIRE(OpNames(*rewritten) == std::vector<std::string>{op_names::kConcat, op_names::kSplit, op_names::kAdd});
  const Node& split = rewritten->node(1);
  CHECK(rewritten->value(split.outputs[0]).name != rewritten->value(split.outputs[1]).name);
  auto exported = ExportOnnx(NewOnnxModel(*rewritten, 17));  // the ONNX checker wants each name once
  CHECK(exported.ok());
  ExpectSameOutputs(g, *rewritten);
}

TEST_CASE("A node's outputs cannot share a name") {
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {4, 4});
  REQUIRE(x.ok());
  Params split;
  split.Set("axis", int64_t{0});
  split.Set("sizes", std::vector<int64_t>{2, 2});
  auto outs = g.AddNode(testing::Op(op_names::kSplit), split, {*x}, "split", {"half", "half"});
  REQUIRE_FALSE(outs.ok());
  CHECK_THAT(std::string(outs.status().message()), Catch::Contains("two outputs of one node"));
}

TEST_CASE("Every shipped rule rewrites the small benchmark models into graphs that export and compute the same") {
  // What taso-opt does around the search: biases set apart before, weights folded and
  // fused back after. Each rule instance is applied at its first legal match.
  const std::vector<RuleMatcher> matchers = PrepareRules(ShippedRules().rules);
  for (auto [name, options] : {std::pair<std::string, models::ModelOptions>{"resnext50", {.image_size = 64}},
                               {"nasnet_a", {.image_size = 64, .layers = 1}},
                               {"bert", {.layers = 1}}}) {
    SECTION(name) {
      auto model = models::BuildModel(name, options);
      REQUIRE(model.ok());
      auto fused = FuseIntoConvolutions(model->graph);
      REQUIRE(fused.ok());
      auto separated = SeparateConvolutionBias(*fused);
      REQUIRE(separated.ok());
      const GraphIndex index(*separated);
      const TensorMap inputs = RandomInputs(model->graph, 3);
      auto expected = RunReference(model->graph, inputs);
      REQUIRE(expected.ok());
      int applied = 0;
      for (const RuleMatcher& rule : matchers) {
        for (const Match& match : rule.FindAll(*separated, index)) {
          auto rewritten = ApplyMatch(*separated, rule, match);
          if (!rewritten.ok()) continue;  // a cycle or a changed shape: refused, tested above
          INFO("rule " << rule.rule().name);
          auto folded = FoldWeights(*rewritten);
          REQUIRE(folded.ok());
          auto refused = FuseIntoConvolutions(*folded);
          REQUIRE(refused.ok());
          auto exported = ExportOnnx(OnnxModel{*refused, model->shell, model->opset});
          REQUIRE(exported.ok());
          auto got = RunReference(*refused, inputs);
          REQUIRE(got.ok());
          CHECK(MaxAbsDifference(*expected, *got) < 1e-3);
          ++applied;
          break;
        }
      }
      CHECK(applied > 0);
    }
  }
}

TEST_CASE("A rewrite that would make a cycle is refused") {
  // y2 = x @ relu(x @ w): fusing the two MatMuls needs relu's output before either runs.
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {16, 16});
  REQUIRE(x.ok());
  const ValueId w = AddWeight(g, "w", {16, 16}, 3);
  const ValueId y1 = AddOp(g, op_names::kMatMul, {*x, w}, "y1");
  const ValueId z = AddOp(g, op_names::kRelu, {y1}, "z");
  REQUIRE(g.AddOutput(AddOp(g, op_names::kMatMul, {*x, z}, "y2")).ok());
  auto rule = RuleMatcher::Create(MergeMatMulsRule());
  REQUIRE(rule.ok());
  const std::vector<Match> matches = rule->FindAll(g, GraphIndex(g));
  REQUIRE(!matches.empty());
  for (const Match& m : matches) {
    auto r = ApplyMatch(g, *rule, m);
    REQUIRE(!r.ok());
    CHECK_THAT(std::string(r.status().message()), Catch::Contains("cycle"));
  }
}

TEST_CASE("A pattern whose inside is read elsewhere does not match") {
  auto rule = RuleMatcher::Create(ReluTwice());
  REQUIRE(rule.ok());
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {4, 6});
  REQUIRE(x.ok());
  const ValueId r1 = AddOp(g, op_names::kRelu, {*x}, "r1");
  const ValueId r2 = AddOp(g, op_names::kRelu, {r1}, "r2");
  REQUIRE(g.AddOutput(r2).ok());
  {
    const std::vector<Match> matches = rule->FindAll(g, GraphIndex(g));
    REQUIRE(matches.size() == 1);
    auto once = ApplyMatch(g, *rule, matches[0]);
    REQUIRE(once.ok());
    CHECK(OpNames(*once) == std::vector<std::string>{op_names::kRelu});
    CHECK(once->value(once->outputs()[0]).name == "r2");
    ExpectSameOutputs(g, *once);
  }
  REQUIRE(g.AddOutput(r1).ok());  // now r1 is needed outside the pattern
  CHECK(rule->FindAll(g, GraphIndex(g)).empty());
}

TEST_CASE("Imported convolutions match rules through their rule form") {
  // Conv with explicit pads [1,1,1,1] and group 1 is the rules' dense, same-padded conv.
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {1, 4, 6, 6});
  REQUIRE(x.ok());
  const ValueId w = AddWeight(g, "w", {4, 4, 3, 3}, 4);
  Params conv;
  conv.Set("strides", std::vector<int64_t>{1, 1})
      .Set("pads", std::vector<int64_t>{1, 1, 1, 1})
      .Set("dilations", std::vector<int64_t>{1, 1})
      .Set("group", int64_t{1});
  const ValueId c = AddOp(g, op_names::kConv2D, {*x, w}, "c", conv);
  REQUIRE(g.AddOutput(AddOp(g, op_names::kRelu, {c}, "y")).ok());
  const GraphIndex index(g);
  const std::optional<Params>& form = index.rule_params[g.value(c).producer];
  REQUIRE(form.has_value());
  CHECK(form->Str("padding") == "same");
  CHECK(form->Str("grouping") == "dense");
  CHECK(form->Str("activation") == "none");
  CHECK(!form->Has("pads"));
  // Asymmetric pads have no rule form: such a node is never matched.
  conv.Set("pads", std::vector<int64_t>{0, 0, 1, 1});
  Graph h;
  auto hx = h.AddInput("x", DataType::kFloat32, {1, 4, 6, 6});
  REQUIRE(hx.ok());
  const ValueId hc = AddOp(h, op_names::kConv2D, {*hx, AddWeight(h, "w", {4, 4, 3, 3}, 4)}, "c", conv);
  CHECK(!GraphIndex(h).rule_params[h.value(hc).producer].has_value());
}

TEST_CASE("Weight-only subgraphs are folded into weights and cost nothing") {
  const Graph g = testing::ConcatenatedWeightLayer();
  CHECK(FindWeightOnly(g).nodes == std::vector<bool>{true, false});
  AnalyticCost cost;
  CHECK(cost.TotalCost(g) == cost.NodeCost(g, 1));
  auto folded = FoldWeights(g);
  REQUIRE(folded.ok());
  CHECK(OpNames(*folded) == std::vector<std::string>{op_names::kMatMul});
  CHECK(folded->value(folded->FindValue("both")).shape == Shape{16, 56});
  CHECK(folded->FindValue("w1") == kNoValue);  // no longer read
  ExpectSameOutputs(g, *folded);
}

TEST_CASE("Folding keeps int64 constants and folds constants shaped like an activation") {
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {1, 4, 6, 6});
  REQUIRE(x.ok());
  // An ONNX Constant holding a shape (int64) read by a Reshape.
  auto shape = g.AddNode(testing::Op(op_names::kConstant), Params().Set("value", TensorData::Int64({2}, {4, 36})), {},
                         "shape", {"shape"});
  REQUIRE(shape.ok());
  // Average pooling as a depthwise convolution with C_pool, whose shape comes from x.
  const ValueId pool = AddOp(g, op_names::kC_pool, {*x}, "pool", Params().Set("kernel", std::vector<int64_t>{3, 3}));
  const ValueId conv = AddOp(g, op_names::kConv2D, {*x, pool}, "conv",
                             Params().Set("grouping", "depthwise").Set("padding", "same").Set("activation", "none"));
  REQUIRE(g.AddOutput(AddOp(g, op_names::kReshape, {conv, (*shape)[0]}, "y")).ok());
  CHECK(FindWeightOnly(g).nodes == std::vector<bool>{true, true, false, false});
  auto folded = FoldWeights(g);
  REQUIRE(folded.ok());
  CHECK(OpNames(*folded) == std::vector<std::string>{op_names::kConv2D, op_names::kReshape});
  const Value& kept = folded->value(folded->FindValue("shape"));
  REQUIRE(kept.is_weight());
  CHECK(kept.data->dtype() == DataType::kInt64);
  CHECK(folded->value(folded->FindValue("pool")).is_weight());
  ExpectSameOutputs(g, *folded);
}

TEST_CASE("Folding writes no weight nothing reads") {
  // An unread ONNX Constant (exporters leave such) and an unread product of weights.
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {4, 16});
  REQUIRE(x.ok());
  auto unread = g.AddNode(testing::Op(op_names::kConstant), Params().Set("value", TensorData::Int64({1}, {7})), {},
                          "unread", {"unread"});
  REQUIRE(unread.ok());
  const ValueId w1 = AddWeight(g, "w1", {16, 16}, 1), w2 = AddWeight(g, "w2", {16, 16}, 2);
  AddOp(g, op_names::kMatMul, {w1, w2}, "dead");
  const ValueId both = AddOp(g, op_names::kAdd, {w1, w2}, "both");
  REQUIRE(g.AddOutput(AddOp(g, op_names::kMatMul, {*x, both}, "y")).ok());
  auto folded = FoldWeights(g);
  REQUIRE(folded.ok());
  CHECK(OpNames(*folded) == std::vector<std::string>{op_names::kMatMul});
  CHECK(folded->FindValue("unread") == kNoValue);
  CHECK(folded->FindValue("dead") == kNoValue);
  CHECK(folded->weights().size() == 1);
  CHECK(folded->value(folded->FindValue("both")).is_weight());
  ExpectSameOutputs(g, *folded);
}

TEST_CASE("The search is deterministic and never returns a costlier graph") {
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {8, 16});
  REQUIRE(x.ok());
  const ValueId w1 = AddWeight(g, "w1", {16, 16}, 1), w2 = AddWeight(g, "w2", {16, 16}, 2);
  const ValueId a = AddOp(g, op_names::kRelu, {AddOp(g, op_names::kMatMul, {*x, w1}, "m1")}, "a");
  const ValueId b = AddOp(g, op_names::kRelu, {AddOp(g, op_names::kMatMul, {*x, w2}, "m2")}, "b");
  REQUIRE(g.AddOutput(AddOp(g, op_names::kAdd, {a, b}, "y")).ok());
  const std::vector<RuleMatcher> matchers = PrepareRules(ShippedRules().rules);
  SearchOptions options;
  options.budget = 5;
  AnalyticCost cost;
  SearchResult first = Optimize(g, matchers, cost, options);
  SearchResult second = Optimize(g, matchers, cost, options);
  CHECK(first.best.StructuralHash() == second.best.StructuralHash());
  CHECK(first.rules_applied == second.rules_applied);
  CHECK(first.best_cost <= first.initial_cost);
  CHECK(cost.TotalCost(first.best) == first.best_cost);
  ExpectSameOutputs(g, first.best);
}

TEST_CASE("A rule whose target reads an input its source does not is refused") {
  Rule r = ReluTwice();
  r.inputs.push_back({"B", {4, 4}, false});  // read by the target only
  r.source.ops[1].inputs = {2};              // tensors: A, B, then the source's outputs
  r.source.outputs = {3};
  RuleOp add;
  add.op = testing::Op(op_names::kAdd);
  add.inputs = {0, 1};
  r.target.ops = {add};
  r.target.outputs = {2};
  auto m = RuleMatcher::Create(r);
  REQUIRE(!m.ok());
  CHECK_THAT(std::string(m.status().message()), Catch::Contains("does not read input B"));
}

TEST_CASE("Tests find shipped rules by what they compute rather than by generated name") {
  const Rule& merge = MergeMatMulsRule();
  CHECK(testing::RuleSideText(merge, merge.source) == "MatMul(A, B), MatMul(A, C)");
  CHECK(testing::RuleSideText(merge, merge.target) ==
        "Split{axis=1}(MatMul(A, Concat{axis=1}(B, C)))[0], Split{axis=1}(MatMul(A, Concat{axis=1}(B, C)))[1]");
  // Inputs are matched up to renaming, spaces are ignored, parameters given must agree.
  CHECK(testing::ShippedRulesLike("MatMul(Y,X),MatMul(Y,Z)",
                                  "Split(MatMul(Y,Concat{axis=1}(X,Z)))[0],Split(MatMul(Y,Concat(X,Z)))[1]",
                                  2) == std::vector<const Rule*>{&merge});
  CHECK(testing::ShippedRulesLike("MatMul(B, A), MatMul(B, C)",
                                  "Split(MatMul(B, Concat{axis=0}(A, C)))[0], Split(MatMul(B, Concat(A, C)))[1]")
            .empty());
  // The two halves of A + B along either axis: parameters tell them apart.
  const std::vector<const Rule*> both =
      testing::ShippedRulesLike("Add(A, B)", "Add(Split(Concat(B, A))[0], Split(Concat(B, A))[1])", 2);
  const std::vector<const Rule*> first_axis =
      testing::ShippedRulesLike("Add(A, B)", "Add(Split(Concat{axis=0}(B, A))[0], Split(Concat(B, A))[1])", 2);
  CHECK(both.size() == 2);
  REQUIRE(first_axis.size() == 1);
  CHECK(std::count(both.begin(), both.end(), first_axis[0]) == 1);
  CHECK(testing::ShippedRulesLike("Add(A, B)", "Add(B, A)").empty());  // commutativity is no rule
}
