// Rewrites written by hand outside the rule files, stated as rules over the operator
// axioms and proved as the shipped rules are (issue 45, item 3), each tied to the code:
// the code is run on graphs of the rule's sides and does what the rule states. What
// cannot be stated over the axioms is listed in docs/ARCHITECTURE.md, "Rewrites checked
// only by execution".
#include <catch2/catch.hpp>

#include "prover.h"
#include "rule_builders.h"
#include "taso/ir/executor.h"
#include "taso/ir/join_pieces.h"
#include "taso/ir/ops/names.h"
#include "taso/passes/inference_fusion.h"
#include "test_util.h"

using namespace taso;
using namespace taso::verify;

namespace {

using testing::MakeRule;

// Proved from the shipped axioms within the verifier's budget (Z3's resource count, and
// its wall-clock guard of 60 s).
Verdict Prove(const Rule& rule) {
  auto axioms = LoadAxioms(std::string(TASO_SOURCE_DIR) + "/axioms");
  REQUIRE(axioms.ok());
  auto encoded = EncodeRules(*axioms, Instances(rule));
  REQUIRE(encoded.ok());
  ProveOptions options;
  options.jobs = 1;
  Verdict worst = Verdict::kProved;
  for (const Outcome& o : ProveRules(*axioms, *encoded, options)) {
    INFO(o.rule << ": " << VerdictName(o.verdict));
    CHECK(o.verdict == Verdict::kProved);
    if (o.verdict != Verdict::kProved) worst = o.verdict;
  }
  return worst;
}

Graph Side(const Rule& rule, const RuleGraph& side) {
  std::vector<Shape> shapes;
  for (const RuleInput& in : rule.inputs) shapes.push_back(in.example_shape);
  auto g = InstantiateRuleGraph(rule, side, shapes);
  REQUIRE(g.ok());
  return *std::move(g);
}

// A graph's operators in topological order, each as "Op(input names)", with a
// convolution's activation: how two graphs are compared for doing the same.
std::vector<std::string> Structure(const Graph& g) {
  auto order = g.TopologicalOrder();
  REQUIRE(order.ok());
  std::vector<std::string> out;
  for (NodeId n : *order) {
    const Node& node = g.node(n);
    std::string s(node.op->name());
    if (node.params.Has("activation")) s += "{" + node.params.Str("activation", "") + "}";
    s += "(";
    for (ValueId v : node.inputs) {
      const Value& value = g.value(v);
      s += (value.producer == kNoNode ? value.name : "_") + ",";
    }
    out.push_back(s + ")");
  }
  return out;
}

}  // namespace

TEST_CASE("Nested concatenations joined into one: concatenation is associative") {
  // JoinNestedPieces (src/ir/join_pieces.cc) and the e-graph's JoinConcats
  // (src/egraph/join_pieces.cc) make Concat(Concat(A, B), C) and Concat(A, Concat(B, C))
  // one Concat(A, B, C): the two nestings compute one value.
  for (int64_t axis : {0, 1}) {
    INFO("axis " << axis);
    const Rule rule = MakeRule("concat_join", {{"A", {2, 3}}, {"B", {2, 3}}, {"C", {2, 3}}},
                               {{testing::MakeRuleOp(op_names::kConcat, {0, 1}, testing::Axis(axis)),
                                 testing::MakeRuleOp(op_names::kConcat, {3, 2}, testing::Axis(axis))},
                                {4}},
                               {{testing::MakeRuleOp(op_names::kConcat, {1, 2}, testing::Axis(axis)),
                                 testing::MakeRuleOp(op_names::kConcat, {0, 3}, testing::Axis(axis))},
                                {4}});
    CHECK(Prove(rule) == Verdict::kProved);
    auto left = JoinNestedPieces(Side(rule, rule.source)), right = JoinNestedPieces(Side(rule, rule.target));
    REQUIRE(left.ok());
    REQUIRE(right.ok());
    CHECK(Structure(*left) == std::vector<std::string>{"Concat(A,B,C,)"});
    CHECK(Structure(*right) == Structure(*left));
  }
}

TEST_CASE("Nested splits joined into one: a piece cut again is a piece of one cut") {
  // JoinNestedPieces and the e-graph's JoinSplits make Split(X) with its second piece
  // split again, and Split(X) with its first piece split again, one Split of X into three
  // pieces. Over the axioms a split cuts where its input was concatenated, so X is
  // Concat(A, Concat(B, C)) for the first and Concat(Concat(A, B), C) for the second:
  // both give the pieces A, B, C.
  const Rule rule = MakeRule("split_join", {{"A", {2, 3}}, {"B", {1, 3}}, {"C", {3, 3}}},
                             {{testing::MakeRuleOp(op_names::kConcat, {1, 2}, testing::Axis(0)),
                               testing::MakeRuleOp(op_names::kConcat, {0, 3}, testing::Axis(0)),
                               testing::MakeRuleOp(op_names::kSplit, {4}, testing::Pieces(0, {2, 4}), 2),
                               testing::MakeRuleOp(op_names::kSplit, {6}, testing::Pieces(0, {1, 3}), 2)},
                              {5, 7, 8}},
                             {{testing::MakeRuleOp(op_names::kConcat, {0, 1}, testing::Axis(0)),
                               testing::MakeRuleOp(op_names::kConcat, {3, 2}, testing::Axis(0)),
                               testing::MakeRuleOp(op_names::kSplit, {4}, testing::Pieces(0, {3, 3}), 2),
                               testing::MakeRuleOp(op_names::kSplit, {5}, testing::Pieces(0, {2, 1}), 2)},
                              {7, 8, 6}});
  CHECK(Prove(rule) == Verdict::kProved);
  auto left = JoinNestedPieces(Side(rule, rule.source)), right = JoinNestedPieces(Side(rule, rule.target));
  REQUIRE(left.ok());
  REQUIRE(right.ok());
  // Both become one concatenation cut once into the three pieces, in the outputs' order.
  CHECK(Structure(*left) == std::vector<std::string>{"Concat(A,B,C,)", "Split(_,)"});
  CHECK(Structure(*right) == Structure(*left));
}

TEST_CASE("A concatenation of a split's pieces in order is the split's input") {
  // JoinNestedPieces (ConcatOfSplit) and the e-graph's AddJoinedReaders (which adds the
  // Concat of a two-piece Split's pieces to the class of its input, and a Concat of two
  // readers with its Split to theirs) rest on Split undoing Concat and Concat undoing
  // Split.
  const Rule undo = MakeRule(
      "concat_of_split", {{"A", {2, 3}}, {"B", {1, 3}}},
      {{testing::MakeRuleOp(op_names::kConcat, {0, 1}, testing::Axis(0)),
        testing::MakeRuleOp(op_names::kSplit, {2}, testing::Pieces(0, {2, 1}), 2),
        testing::MakeRuleOp(op_names::kConcat, {3, 4}, testing::Axis(0)), testing::MakeRuleOp(op_names::kRelu, {5})},
       {6}},
      {{testing::MakeRuleOp(op_names::kConcat, {0, 1}, testing::Axis(0)), testing::MakeRuleOp(op_names::kRelu, {2})},
       {3}});
  CHECK(Prove(undo) == Verdict::kProved);
  auto joined = JoinNestedPieces(Side(undo, undo.source));
  REQUIRE(joined.ok());
  CHECK(Structure(*joined) == Structure(Side(undo, undo.target)));
  // The readers' join: two tensors are the pieces of their concatenation.
  const Rule readers = MakeRule("readers_joined", {{"A", {2, 3}}, {"B", {1, 3}}}, {{}, {0, 1}},
                                {{testing::MakeRuleOp(op_names::kConcat, {0, 1}, testing::Axis(0)),
                                  testing::MakeRuleOp(op_names::kSplit, {2}, testing::Pieces(0, {2, 1}), 2)},
                                 {3, 4}});
  CHECK(Prove(readers) == Verdict::kProved);
}

TEST_CASE("An activation fused into a convolution, also through a split of its channels") {
  // FuseIntoConvolutions (src/passes/inference_fusion.cc) makes Relu(testing::DenseSameConv(X, W)) one
  // convolution with activation relu (the axiom conv_relu states just this), and where
  // a Split along the channels comes first and each piece has its Relu, the relu
  // convolution then the Split. SeparateConvolutionBias undoes the activation likewise.
  const Shape x = {1, 2, 4, 4}, w1 = {3, 2, 3, 3}, w2 = {2, 2, 3, 3};
  const Rule fused = MakeRule("conv_relu", {{"X", x}, {"W", w1}},
                              {{testing::MakeRuleOp(op_names::kConv2D, {0, 1}, testing::DenseSameConv("none")),
                                testing::MakeRuleOp(op_names::kRelu, {2})},
                               {3}},
                              {{testing::MakeRuleOp(op_names::kConv2D, {0, 1}, testing::DenseSameConv("relu"))}, {2}});
  CHECK(Prove(fused) == Verdict::kProved);
  // Over the axioms a split cuts where its input was concatenated: the kernel is two
  // kernels joined, and the convolution's channels are theirs.
  const Rule through_split =
      MakeRule("conv_split_relu", {{"X", x}, {"V", w1}, {"W", w2}},
               {{testing::MakeRuleOp(op_names::kConcat, {1, 2}, testing::Axis(0)),
                 testing::MakeRuleOp(op_names::kConv2D, {0, 3}, testing::DenseSameConv("none")),
                 testing::MakeRuleOp(op_names::kSplit, {4}, testing::Pieces(1, {3, 2}), 2),
                 testing::MakeRuleOp(op_names::kRelu, {5}), testing::MakeRuleOp(op_names::kRelu, {6})},
                {7, 8}},
               {{testing::MakeRuleOp(op_names::kConcat, {1, 2}, testing::Axis(0)),
                 testing::MakeRuleOp(op_names::kConv2D, {0, 3}, testing::DenseSameConv("relu")),
                 testing::MakeRuleOp(op_names::kSplit, {4}, testing::Pieces(1, {3, 2}), 2)},
                {5, 6}});
  CHECK(Prove(through_split) == Verdict::kProved);

  // The code on those graphs, its kernel a weight (the fusion folds constants only).
  for (bool split : {false, true}) {
    INFO((split ? "through a split" : "directly"));
    Graph g;
    const ValueId in = *g.AddInput("X", DataType::kFloat32, x);
    const ValueId kernel = testing::AddWeight(g, "W", {5, 2, 3, 3}, 3);
    const ValueId conv = testing::AddOp(g, op_names::kConv2D, {in, kernel}, "y", testing::DenseSameConv("none"));
    if (split) {
      auto pieces = g.AddNode(testing::Op(op_names::kSplit), testing::Pieces(1, {3, 2}), {conv});
      REQUIRE(pieces.ok());
      for (ValueId p : *pieces) REQUIRE(g.AddOutput(testing::AddOp(g, op_names::kRelu, {p}, "")).ok());
    } else {
      REQUIRE(g.AddOutput(testing::AddOp(g, op_names::kRelu, {conv}, "z")).ok());
    }
    auto made = FuseIntoConvolutions(g);
    REQUIRE(made.ok());
    const std::vector<std::string> expected = split ? std::vector<std::string>{"Conv2D{relu}(X,W,)", "Split(_,)"}
                                                    : std::vector<std::string>{"Conv2D{relu}(X,W,)"};
    CHECK(Structure(*made) == expected);
    CHECK(testing::OutputDifference(g, *made) < 1e-6);
    auto separated = SeparateConvolutionBias(*made);  // without a bias: the activation stays fused
    REQUIRE(separated.ok());
    CHECK(Structure(*separated) == expected);
  }
}
