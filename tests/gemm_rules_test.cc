// Products with a bias (Gemm) in rules: the rule form the generator enumerates (no
// scaling, A as it is, a bias vector), and the shipped rule that folds a low-rank adapter
// into a linear layer's weight.
#include <catch2/catch.hpp>

#include "rule_lookup.h"
#include "taso/ir/executor.h"
#include "taso/ir/ops/names.h"
#include "taso/passes/fold.h"
#include "taso/rules/rules.h"
#include "test_util.h"

using namespace taso;
using testing::AddOp;
using testing::AddWeight;

namespace {

std::optional<Params> GemmRuleParams(const Params& p, std::vector<Shape> shapes) {
  std::vector<InputInfo> in;
  for (auto& s : shapes) in.push_back(InputInfo{true, DataType::kFloat32, s});
  return testing::Op(op_names::kGemm)->rule_form().RuleParams(p, in);
}

// x [8,16] -> Gemm(x, W^T [12,16], b [12]) + x V [16,12]: a linear layer and an adapter
// whose factors are already multiplied (V).
Graph LinearWithAdapter() {
  Graph g;
  auto x = g.AddInput("x", DataType::kFloat32, {8, 16});
  REQUIRE(x.ok());
  const ValueId linear = AddOp(g, op_names::kGemm, {*x, AddWeight(g, "w", {12, 16}, 1), AddWeight(g, "b", {12}, 2)},
                               "linear", Params().Set("transB", int64_t{1}));
  const ValueId adapter = AddOp(g, op_names::kMatMul, {*x, AddWeight(g, "v", {16, 12}, 3)}, "adapter");
  REQUIRE(g.AddOutput(AddOp(g, op_names::kAdd, {linear, adapter}, "y")).ok());
  return g;
}

}  // namespace

TEST_CASE("Only an unscaled Gemm with a bias vector has a rule form") {
  const Params plain = Params().Set("alpha", 1.0).Set("beta", 1.0).Set("transA", int64_t{0}).Set("transB", int64_t{1});
  const std::vector<Shape> shapes = {{8, 16}, {12, 16}, {12}};
  auto form = GemmRuleParams(plain, shapes);
  REQUIRE(form.has_value());
  CHECK(form->ToString() == "transB=1");
  CHECK_FALSE(GemmRuleParams(Params(plain).Set("alpha", 2.0), shapes));
  CHECK_FALSE(GemmRuleParams(Params(plain).Set("beta", 0.5), shapes));
  CHECK_FALSE(GemmRuleParams(Params(plain).Set("transA", int64_t{1}), {{16, 8}, {12, 16}, {12}}));
  CHECK_FALSE(GemmRuleParams(plain, {{8, 16}, {12, 16}, {8, 12}}));  // a matrix C
  CHECK_FALSE(GemmRuleParams(plain, {{8, 16}, {12, 16}}));           // no bias
}

TEST_CASE("The shipped adapter-folding rule leaves one Gemm computing the same") {
  const Rule& rule = testing::ShippedRuleLike("Add(Gemm{transB=1}(A, C, b), MatMul(A, B))",
                                              "Gemm{transB=1}(A, Add(C, Transpose(B)), b)");
  const Graph g = LinearWithAdapter();
  const std::optional<Graph> applied = testing::ApplyFirstMatch(g, rule);
  REQUIRE(applied.has_value());
  auto folded = FoldWeights(*applied);
  REQUIRE(folded.ok());
  REQUIRE(folded->num_nodes() == 1);
  CHECK(folded->node(0).op->name() == op_names::kGemm);
  const TensorMap inputs = RandomInputs(g, 11);
  auto before = RunReference(g, inputs);
  auto after = RunReference(*folded, inputs);
  REQUIRE(before.ok());
  REQUIRE(after.ok());
  CHECK(MaxAbsDifference(*before, *after) < 1e-4);
}
