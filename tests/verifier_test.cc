// taso-verify: rules proved from the axioms with Z3, wrong rules not proved, and bad
// axiom and rule files refused with clear errors.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "axiom_checks.h"
#include "axiom_validation.h"
#include "explain.h"
#include "generator.h"
#include "left_out_rules.h"
#include "prover.h"
#include "rule_builders.h"
#include "taso/ir/ops/names.h"
#include "test_util.h"

using namespace taso;
using namespace taso::verify;

namespace {

const std::string kAxioms = std::string(TASO_SOURCE_DIR) + "/axioms";

// A rule over 4x4 inputs of these names.
Rule MakeSquareRule(const std::string& name, const std::vector<std::string>& inputs, RuleGraph source,
                    RuleGraph target) {
  std::vector<std::pair<std::string, Shape>> shaped;
  for (const std::string& in : inputs) shaped.push_back({in, {4, 4}});
  return testing::MakeRule(name, shaped, std::move(source), std::move(target));
}

Verdict ProveOne(const Rule& rule) {
  auto axioms = LoadAxioms(kAxioms);
  REQUIRE(axioms.ok());
  auto encoded = EncodeRules(*axioms, {rule});
  REQUIRE(encoded.ok());
  ProveOptions options;
  options.jobs = 1;
  return ProveRules(*axioms, *encoded, options)[0].verdict;
}

// concat(a, relu x, relu y) = relu(concat(a, x, y)), its axis a variable taking 0 and 1.
Rule ReluConcatForEveryAxis(const std::string& name) {
  Params axis;
  axis.Set("axis", int64_t{0});
  Rule r = MakeSquareRule(
      name, {"A", "B"},
      {{testing::MakeRuleOp(op_names::kRelu, {0}), testing::MakeRuleOp(op_names::kRelu, {1}),
        testing::MakeRuleOp(op_names::kConcat, {2, 3}, axis)},
       {4}},
      {{testing::MakeRuleOp(op_names::kConcat, {0, 1}, axis), testing::MakeRuleOp(op_names::kRelu, {2})}, {3}});
  r.source.ops[2].bound["axis"] = "p0";
  r.target.ops[0].bound["axis"] = "p0";
  r.vars = {{"p0", {int64_t{0}, int64_t{1}}}};
  return r;
}

}  // namespace

TEST_CASE("Right rules are proved and wrong ones are not") {
  // Inputs 0, 1, 2; operator outputs from 3 on.
  // MatMul is associative, not commutative.
  CHECK(ProveOne(MakeSquareRule(
            "assoc", {"A", "B", "C"},
            {{testing::MakeRuleOp(op_names::kMatMul, {0, 1}), testing::MakeRuleOp(op_names::kMatMul, {3, 2})}, {4}},
            {{testing::MakeRuleOp(op_names::kMatMul, {1, 2}), testing::MakeRuleOp(op_names::kMatMul, {0, 3})}, {4}})) ==
        Verdict::kProved);
  CHECK(ProveOne(MakeSquareRule("commutes", {"A", "B"}, {{testing::MakeRuleOp(op_names::kMatMul, {0, 1})}, {2}},
                                {{testing::MakeRuleOp(op_names::kMatMul, {1, 0})}, {2}})) != Verdict::kProved);
  // Convolution is linear in its kernel without activation, not with relu.
  for (const char* act : {"none", "relu"}) {
    Rule linear = MakeSquareRule(std::string("linear_") + act, {"X", "W", "V"},
                                 {{testing::MakeRuleOp(op_names::kAdd, {1, 2}),
                                   testing::MakeRuleOp(op_names::kConv2D, {0, 3}, testing::DenseSameConv(act))},
                                  {4}},
                                 {{testing::MakeRuleOp(op_names::kConv2D, {0, 1}, testing::DenseSameConv(act)),
                                   testing::MakeRuleOp(op_names::kConv2D, {0, 2}, testing::DenseSameConv(act)),
                                   testing::MakeRuleOp(op_names::kAdd, {3, 4})},
                                  {5}});
    CHECK((ProveOne(linear) == Verdict::kProved) == (std::string(act) == "none"));
  }
  // Split undoes Concat, in order; the halves swapped is wrong.
  Params axis0;
  axis0.Set("axis", int64_t{0});
  for (bool swapped : {false, true}) {
    Rule split = MakeSquareRule(
        swapped ? "swapped" : "in_order", {"A", "B"},
        {{testing::MakeRuleOp(op_names::kConcat, {0, 1}, axis0), testing::MakeRuleOp(op_names::kSplit, {2}, axis0, 2)},
         {3, 4}},
        {{}, swapped ? std::vector<int>{1, 0} : std::vector<int>{0, 1}});
    CHECK((ProveOne(split) == Verdict::kProved) == !swapped);
  }
}

TEST_CASE("Concatenations re-associated prove their values equal, not any two tensors") {
  Params axis0;
  axis0.Set("axis", int64_t{0});
  // Concat(Concat(A, B), C) and Concat(A, Concat(B, C)) have the same values.
  CHECK(ProveOne(MakeSquareRule("associative", {"A", "B", "C"},
                                {{testing::MakeRuleOp(op_names::kConcat, {0, 1}, axis0),
                                  testing::MakeRuleOp(op_names::kConcat, {3, 2}, axis0)},
                                 {4}},
                                {{testing::MakeRuleOp(op_names::kConcat, {1, 2}, axis0),
                                  testing::MakeRuleOp(op_names::kConcat, {0, 3}, axis0)},
                                 {4}})) == Verdict::kProved);
  // But a split cuts them apart (at A, and at A and B): were they equal tensors, the first
  // piece of Concat(A, Concat(B, A)) (that is A) would be the first piece of
  // Concat(Concat(A, B), A) (A and B), and the second piece of Concat(Concat(A, A), B)
  // (that is B) that of Concat(A, Concat(A, B)) (A and B): A = B for any A and B.
  CHECK(ProveOne(MakeSquareRule("a_is_b", {"A", "B"},
                                {{testing::MakeRuleOp(op_names::kConcat, {1, 0}, axis0),
                                  testing::MakeRuleOp(op_names::kConcat, {0, 2}, axis0),
                                  testing::MakeRuleOp(op_names::kSplit, {3}, axis0, 2)},
                                 {4}},
                                {{testing::MakeRuleOp(op_names::kConcat, {0, 0}, axis0),
                                  testing::MakeRuleOp(op_names::kConcat, {2, 1}, axis0),
                                  testing::MakeRuleOp(op_names::kSplit, {3}, axis0, 2)},
                                 {5}})) != Verdict::kProved);
}

TEST_CASE("A parametric rule is proved for every value of its variables") {
  const Rule r = ReluConcatForEveryAxis("relu_concat");
  CHECK(ProveOne(r) == Verdict::kProved);
  // The same with the second concatenation's axis fixed to 0 while the first varies: false.
  Rule mixed = r;
  mixed.target.ops[0].bound.clear();
  CHECK(ProveOne(mixed) != Verdict::kProved);
}

// The names of the axioms the proof of `rule` uses.
std::set<std::string> ProofAxioms(const Rule& rule) {
  auto axioms = LoadAxioms(kAxioms);
  REQUIRE(axioms.ok());
  auto encoded = EncodeRules(*axioms, {rule});
  REQUIRE(encoded.ok());
  auto used = AxiomsOfProof(*axioms, encoded->front(), ProveOptions{}.budget);
  REQUIRE(used.ok());
  std::set<std::string> names;
  for (const Axiom* a : *used) names.insert(a->name);
  return names;
}

TEST_CASE("A proof names the axioms it rests on, and only a proved rule has one") {
  // (A B) C = A (B C) rests on associativity alone.
  const Rule assoc = MakeSquareRule(
      "assoc", {"A", "B", "C"},
      {{testing::MakeRuleOp(op_names::kMatMul, {0, 1}), testing::MakeRuleOp(op_names::kMatMul, {3, 2})}, {4}},
      {{testing::MakeRuleOp(op_names::kMatMul, {1, 2}), testing::MakeRuleOp(op_names::kMatMul, {0, 3})}, {4}});
  CHECK(ProofAxioms(assoc) == std::set<std::string>{"matmul_associative"});
  // Concat then Split gives the parts back: concatenation axioms, no product's.
  Params axis0;
  axis0.Set("axis", int64_t{0});
  const Rule split = MakeSquareRule(
      "in_order", {"A", "B"},
      {{testing::MakeRuleOp(op_names::kConcat, {0, 1}, axis0), testing::MakeRuleOp(op_names::kSplit, {2}, axis0, 2)},
       {3, 4}},
      {{}, {0, 1}});
  const std::set<std::string> used = ProofAxioms(split);
  CHECK_FALSE(used.empty());
  for (const std::string& name : used) CHECK(name.find("matmul") == std::string::npos);
  // A false rule has no proof to explain.
  auto axioms = LoadAxioms(kAxioms);
  REQUIRE(axioms.ok());
  const Rule commutes = MakeSquareRule("commutes", {"A", "B"}, {{testing::MakeRuleOp(op_names::kMatMul, {0, 1})}, {2}},
                                       {{testing::MakeRuleOp(op_names::kMatMul, {1, 0})}, {2}});
  auto encoded = EncodeRules(*axioms, {commutes});
  REQUIRE(encoded.ok());
  auto none = AxiomsOfProof(*axioms, encoded->front(), ProveOptions{}.budget);
  REQUIRE_FALSE(none.ok());
  CHECK_THAT(std::string(none.status().message()), Catch::Contains("is not proved"));
}

TEST_CASE("Rules are found by the names taso-opt prints") {
  RuleSet set;
  set.rules = {ReluConcatForEveryAxis("r0007")};
  for (const std::string name : {"r0007", "r0007/1", "r0007/1~"}) {
    INFO(name);
    auto found = FindRuleByName(set, name);
    REQUIRE(found.ok());
    CHECK(found->name == name.substr(0, name.find('~')));
  }
  CHECK(FindRuleByName(set, "r0007/1")->source.ops[2].params.Int("axis", -1) == 1);
  for (const std::string name : {"r0008", "r0007/2", "r000"}) {
    auto missing = FindRuleByName(set, name);
    REQUIRE_FALSE(missing.ok());
    CHECK_THAT(std::string(missing.status().message()), Catch::Contains("no rule named '" + name + "'"));
  }
}

TEST_CASE("Bad axiom files are refused with the file and line") {
  auto dir = testing::TempDir("bad_axioms");
  for (const auto& f : std::filesystem::directory_iterator(kAxioms))
    std::filesystem::copy_file(f.path(), dir / f.path().filename());
  {
    std::ofstream conv(dir / "conv.smt2", std::ios::app);
    conv << "(assert (! (forall ((x T)) (= (conv x) x)) :named broken))\n";
  }
  std::ifstream in(dir / "conv.smt2");
  const int lines = static_cast<int>(std::count(std::istreambuf_iterator<char>(in), {}, '\n'));
  auto bad = LoadAxioms(dir.string());
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()), Catch::Contains("conv.smt2:" + std::to_string(lines) + ":"));
  CHECK_FALSE(LoadAxioms((dir / "absent").string()).ok());
}

TEST_CASE("A rule with an operator no axiom is about is refused") {
  auto dir = testing::TempDir("few_axioms");
  for (const char* f : {"signature.smt2", "elementwise.smt2"})
    std::filesystem::copy_file(std::filesystem::path(kAxioms) / f, dir / f);
  auto axioms = LoadAxioms(dir.string());
  REQUIRE(axioms.ok());
  Rule r = MakeSquareRule("mm", {"A", "B"}, {{testing::MakeRuleOp(op_names::kMatMul, {0, 1})}, {2}},
                          {{testing::MakeRuleOp(op_names::kMatMul, {0, 1})}, {2}});
  auto encoded = EncodeRules(*axioms, {r});
  REQUIRE_FALSE(encoded.ok());
  CHECK_THAT(std::string(encoded.status().message()), Catch::Contains("rule mm uses matmul, which no axiom is about"));
}

// Every shipped rule proved and every axiom validated: CTest runs taso-verify itself on
// them (taso-verify-shipped-rules, taso-verify-check-axioms in CMakeLists.txt).

TEST_CASE("The rules taso-gen finds that the shipped database leaves out are not proved") {
  gen::GenerateOptions generate;
  generate.max_ops = 3;
  gen::GenerateReport report;
  auto generated = gen::Generate(generate, &report);
  REQUIRE(generated.ok());
  auto shipped = ReadRuleSet(std::string(TASO_SOURCE_DIR) + "/rules/taso_k3.pb");
  REQUIRE(shipped.ok());
  const std::vector<Outcome> left_out = testing::ProveLeftOut(*generated, *shipped);
  CHECK(left_out.size() + shipped->rules.size() == generated->rules.size());
  testing::CheckNoneProved(left_out, "rules/taso_k3.pb");
  // The K=4 families' left-out rules are proved where they are generated, in
  // generator_test.cc ("The shipped merges are what taso-gen --changing Gemm makes").
}

TEST_CASE("Every shipped database says it was proved from the axioms there are") {
  auto axioms = LoadAxioms(kAxioms);
  REQUIRE(axioms.ok());
  const std::string proved_by = "taso-verify from " + std::to_string(axioms->axioms.size()) + " axioms";
  for (const char* database : {"taso_k3.pb", "gemm_merges_k4.pb", "gemm_blockdiag_k4.pb"}) {
    INFO(database << ": regenerate it with taso-verify --write-proved (see rules/README.md)");
    auto rules = ReadRuleSet(std::string(TASO_SOURCE_DIR) + "/rules/" + database);
    REQUIRE(rules.ok());
    CHECK(rules->proved_by == proved_by);
  }
  // Each named assertion of axioms/*.smt2 is one axiom, and the documents say how many.
  size_t named = 0;
  for (const auto& f : std::filesystem::directory_iterator(kAxioms)) {
    std::ifstream in(f.path());
    for (std::string line; std::getline(in, line);)
      for (size_t at = line.find(":named "); at != std::string::npos; at = line.find(":named ", at + 1)) ++named;
  }
  CHECK(named == axioms->axioms.size());
  for (const char* doc : {"README.md", "rules/README.md", "docs/ARCHITECTURE.md"}) {
    std::ifstream in(std::string(TASO_SOURCE_DIR) + "/" + doc);
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    const std::regex count(R"(\b([0-9]+) axioms\b)");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), count); it != std::sregex_iterator(); ++it) {
      INFO(doc << ": \"" << it->str() << "\"");
      CHECK(std::stoul((*it)[1]) == axioms->axioms.size());
    }
  }
}

// The whole shipped set is checked by the command (CTest taso-verify-check-axioms, which
// requires "consistent: yes"); here the checks' own behaviour, on a part of it.
TEST_CASE("Axiom checks do not depend on threads, and restated or contradictory axioms are found") {
  auto axioms = LoadAxioms(kAxioms);
  REQUIRE(axioms.ok());
  // The answer does not depend on the threads or on earlier queries: two threads, then
  // one, give the same report, on the first 40 axioms.
  AxiomSet part = *axioms;
  part.axioms.resize(std::min<size_t>(40, part.axioms.size()));
  const AxiomCheckReport two_threads = CheckAxiomSet(part, AxiomCheckOptions{});
  CHECK(two_threads.consistent == Finding::kYes);
  AxiomCheckOptions one_thread;
  one_thread.jobs = 1;
  const AxiomCheckReport again = CheckAxiomSet(part, one_thread);
  CHECK(again.redundant == two_threads.redundant);
  CHECK(again.independent == two_threads.independent);
  CHECK(again.undecided == two_threads.undecided);
  CHECK(two_threads.redundant.size() + two_threads.independent.size() + two_threads.undecided.size() ==
        part.axioms.size());

  auto dir = testing::TempDir("axiom_checks");
  for (const auto& f : std::filesystem::directory_iterator(kAxioms))
    std::filesystem::copy_file(f.path(), dir / f.path().filename());
  {
    std::ofstream extra(dir / "extra.smt2");
    extra << "(assert (! (forall ((x T) (y T) (z T)) (= (ewadd (ewadd x y) z) (ewadd x (ewadd y z))))"
             " :named ewadd_associative_again))\n";
  }
  auto restated = LoadAxioms(dir.string());
  REQUIRE(restated.ok());
  AxiomCheckOptions quick;  // the restated axiom follows within far less
  quick.rlimit = 1'000'000;
  AxiomCheckReport r = CheckAxiomSet(*restated, quick);
  CHECK(std::find(r.redundant.begin(), r.redundant.end(), "ewadd_associative_again") != r.redundant.end());
  {
    std::ofstream extra(dir / "extra.smt2");
    extra << "(assert (! (forall ((x T)) (= (relu x) x)) :named relu_is_identity))\n"
             "(assert (! (exists ((x T)) (not (= (relu x) x))) :named relu_changes_something))\n";
  }
  auto contradictory = LoadAxioms(dir.string());
  REQUIRE(contradictory.ok());
  CHECK(CheckAxiomSet(*contradictory, quick).consistent == Finding::kNo);
}

TEST_CASE("A rule's verdict does not depend on the rules proved before it") {
  auto axioms = LoadAxioms(kAxioms);
  REQUIRE(axioms.ok());
  auto rules = ReadRuleSet(std::string(TASO_SOURCE_DIR) + "/rules/taso_k3.pb");
  REQUIRE(rules.ok());
  auto encoded = EncodeRules(*axioms, std::vector<Rule>(rules->rules.begin(), rules->rules.begin() + 300));
  REQUIRE(encoded.ok());
  ProveOptions options;
  options.jobs = 1;
  std::vector<Outcome> forward = ProveRules(*axioms, *encoded, options);
  std::vector<EncodedRule> reversed(encoded->rbegin(), encoded->rend());
  std::vector<Outcome> backward = ProveRules(*axioms, reversed, options);
  for (size_t i = 0; i < forward.size(); ++i) {
    INFO(forward[i].rule);
    CHECK(forward[i].verdict == backward[forward.size() - 1 - i].verdict);
    CHECK(forward[i].resources == backward[forward.size() - 1 - i].resources);  // the same work, not just verdict
  }
}

TEST_CASE("A proof's budget is Z3's resource count, which a busy machine does not change") {
  auto axioms = LoadAxioms(kAxioms);
  REQUIRE(axioms.ok());
  auto rules = ReadRuleSet(std::string(TASO_SOURCE_DIR) + "/rules/taso_k3.pb");
  REQUIRE(rules.ok());
  auto rule = FindRuleByName(*rules, "r5650");  // the shipped rule whose proof does the most work
  REQUIRE(rule.ok());
  auto encoded = EncodeRules(*axioms, {*rule, *rule});
  REQUIRE(encoded.ok());
  ProveOptions options;  // two threads prove the rule at once, each with its own context
  const std::vector<Outcome> both = ProveRules(*axioms, *encoded, options);
  CHECK(both[0].verdict == Verdict::kProved);
  CHECK(both[0].resources > 100'000);
  CHECK(both[0].resources == both[1].resources);
  CHECK(both[0].resources < options.budget.rlimit / 10);  // the default leaves the costliest shipped proof ample room
  // Half the resources it needs: over budget, however fast the machine.
  options.budget.rlimit = static_cast<unsigned>(both[0].resources / 2);
  options.jobs = 1;
  const Outcome starved = ProveRules(*axioms, {encoded->front()}, options).front();
  CHECK(starved.verdict == Verdict::kOverBudget);
  CHECK(starved.resources >= options.budget.rlimit);
}

namespace {

// The shipped signature plus one family file holding `axioms`.
absl::StatusOr<AxiomSet> AxiomsWith(const std::string& name, const std::string& axioms) {
  auto dir = testing::TempDir(name);
  std::filesystem::copy_file(kAxioms + "/signature.smt2", dir / "signature.smt2");
  std::ofstream(dir / "family.smt2") << axioms;
  return LoadAxioms(dir.string());
}

std::vector<AxiomValidation> Validate(const AxiomSet& axioms) {
  ValidationOptions options;
  options.jobs = 2;
  auto v = ValidateAxioms(axioms, options);
  REQUIRE(v.ok());
  return *v;
}

}  // namespace

TEST_CASE("Axiom validation catches false axioms with a counterexample") {
  auto axioms = AxiomsWith(
      "false_axioms",
      "(assert (! (forall ((s Int) (p Int) (x T) (y T) (z T))\n"
      "  (= (conv s p RELU (ewadd x y) z) (ewadd (conv s p RELU x z) (conv s p RELU y z)))) :named conv_relu_linear))\n"
      "(assert (! (forall ((x T) (y T)) (= (matmul x y) (matmul y x))) :named matmul_commutative))\n"
      "(assert (! (forall ((a Int) (x T) (y T)) (= (split0 a (concat a x y)) y)) :named split_swapped))\n"
      "(assert (! (forall ((x T) (w T)) (= (smul (relu x) w) (relu (smul x w)))) :named relu_scales))\n"
      "(assert (! (forall ((s Int) (p Int) (x T) (y T) (z T))\n"
      "  (= (conv s p NONE (ewadd x y) z) (ewadd (conv s p NONE x z) (conv s p NONE y z)))) :named conv_linear))\n");
  REQUIRE(axioms.ok());
  auto results = Validate(*axioms);
  REQUIRE(results.size() == 5);
  for (int i = 0; i < 4; ++i) {
    INFO(results[i].axiom);
    CHECK(results[i].holds == Finding::kNo);
    CHECK(results[i].detail.find("at ") == 0);  // names the parameters and shapes
  }
  CHECK(results[4].holds == Finding::kYes);  // the true one among them
}

TEST_CASE("Axiom validation refuses an axiom whose sides a split would cut apart") {
  // Equal values, but cut at x against at x and y: stated of tensors, associativity lets
  // the split axioms prove any two tensors equal. Stated of values, it holds.
  auto axioms = AxiomsWith(
      "cut_apart",
      "(assert (! (forall ((a Int) (x T) (y T) (z T))\n"
      "  (= (concat a x (concat a y z)) (concat a (concat a x y) z))) :named concat_associative_tensors))\n"
      "(assert (! (forall ((a Int) (x Value) (y Value) (z Value))\n"
      "  (= (vconcat a x (vconcat a y z)) (vconcat a (vconcat a x y) z))) :named concat_associative))\n"
      "(assert (! (forall ((a Int) (x T) (y T)) (= (value (concat a x y)) (vconcat a (value x) (value y)))) :named "
      "value_concat))\n"
      "(assert (! (forall ((a Int) (x T) (y T)) (= (split1 a (concat a x y)) y)) :named split1_concat))\n");
  REQUIRE(axioms.ok());
  auto results = Validate(*axioms);
  REQUIRE(results.size() == 4);
  CHECK(results[0].holds == Finding::kNo);
  CHECK_THAT(results[0].detail, Catch::Contains("is concatenated as (x.dim0 | (y.dim0 | z.dim0)) against ((x.dim0 | "
                                                "y.dim0) | z.dim0)"));
  for (int i = 1; i < 4; ++i) {
    INFO(results[i].axiom << ": " << results[i].detail);
    CHECK(results[i].holds == Finding::kYes);
  }
}

TEST_CASE("Axiom validation reads element-wise operators without broadcasting") {
  // With broadcasting, conv(x + y) and conv(x) + conv(y) differ when x is one pixel:
  // rules apply only where Add's inputs have one shape, as the generator built them.
  auto axioms = AxiomsWith(
      "broadcast", "(assert (! (forall ((x T) (y T)) (= (ewadd x y) (ewadd y x))) :named ewadd_commutative))\n");
  REQUIRE(axioms.ok());
  auto results = Validate(*axioms);
  CHECK(results[0].holds == Finding::kYes);
  // Every rank and every dimension in {1, 2, 3}, both inputs of one shape: 1 + 3 + 9 + 81.
  CHECK(results[0].cases == 94);
}

TEST_CASE("Axiom validation is bounded by Z3's resource count and says so when it runs out") {
  // Max pooling's nested maxima need real Z3 queries (no normal form cancels them).
  const std::string pool =
      "(assert (! (forall ((k Int) (s Int) (x T))\n"
      "  (= (poolmax k s VALID (poolmax k 1 SAME x)) (poolmax k s SAME (poolmax k 1 VALID x))))"
      " :named poolmax_same_valid))\n";
  auto axioms = AxiomsWith("pool_budget", pool);
  REQUIRE(axioms.ok());
  const AxiomValidation first = Validate(*axioms).front();
  CHECK(first.holds == Finding::kYes);
  CHECK(first.max_resources > 1000);
  CHECK(first.max_resources < ValidationOptions{}.budget.rlimit / 10);
  CHECK(Validate(*axioms).front().max_resources == first.max_resources);  // the same work on every run
  ValidationOptions starved;
  starved.budget.rlimit = static_cast<unsigned>(first.max_resources / 4);
  auto v = ValidateAxioms(*axioms, starved);
  REQUIRE(v.ok());
  CHECK(v->front().holds == Finding::kUnknown);
  CHECK_THAT(v->front().detail, Catch::Contains("budget of"));
}

TEST_CASE("Symbolic kernels fold constants and name what they cannot compute") {
  SymArena& arena = SymArena::Current();
  arena.Reset();
  const Sym x = arena.Variable(0);
  CHECK((x * Domain<Sym>::Zero()).id == Domain<Sym>::Zero().id);
  CHECK((x * Domain<Sym>::One()).id == x.id);
  CHECK((x + Domain<Sym>::Zero()).id == x.id);
  const SymNode& third = arena.node(Domain<Sym>::InverseCount(3) + Domain<Sym>::InverseCount(6));
  CHECK(third.kind == SymNode::kConst);
  CHECK((third.num == 1 && third.den == 2));
  CHECK(Domain<Sym>::Max(Domain<Sym>::Lowest(), x).id == x.id);
  CHECK(arena.error().empty());
  Domain<Sym>::Greater(x, Domain<Sym>::One());
  CHECK(arena.error().find("comparison") != std::string::npos);
  arena.Reset();
  CHECK(arena.error().empty());
}
