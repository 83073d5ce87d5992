#include "prover.h"

#include <chrono>
#include <memory>

#include <z3++.h>

#include "absl/strings/str_cat.h"
#include "taso/ir/parallel.h"
#include "taso/ir/status_macros.h"
#include "watchdog.h"

namespace taso::verify {

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kProved:
      return "proved";
    case Verdict::kNotProved:
      return "not proved";
    case Verdict::kOverBudget:
      return "over budget";
  }
  return "?";
}

absl::StatusOr<std::vector<EncodedRule>> EncodeRules(const AxiomSet& axioms, const std::vector<Rule>& rules) {
  std::vector<EncodedRule> out;
  for (const Rule& r : rules) {
    ASSIGN_OR_RETURN(EncodedRule e, EncodeRule(r));
    for (const std::string& fn : e.symbols)
      if (!axioms.symbols.count(fn))
        return absl::InvalidArgumentError(
            absl::StrCat("rule ", r.name, " uses ", fn, ", which no axiom is about (add axioms for it)"));
    for (const std::string& c : e.constants)
      if (!axioms.constants.count(c))
        return absl::InvalidArgumentError(
            absl::StrCat("rule ", r.name, " uses the value ", c, ", which signature.smt2 does not define"));
    out.push_back(std::move(e));
  }
  return out;
}

namespace {

struct Attempt {
  z3::check_result result = z3::unknown;
  uint64_t resources = 0;
};

}  // namespace

std::vector<Outcome> ProveRules(const AxiomSet& axioms, const std::vector<EncodedRule>& rules,
                                const ProveOptions& options) {
  using Clock = std::chrono::steady_clock;
  const int jobs = std::max(1, options.jobs);
  std::vector<Outcome> out(rules.size());
  Z3Watchdog watchdog(jobs);
  const QueryBudget& budget = options.budget;
  const auto limit = std::chrono::milliseconds(budget.timeout_ms);
  // Each rule gets a context of its own, with the axioms checked once before the rule is
  // added: a context or solver reused across rules keeps state (term order, learned
  // instances) that changes which proofs the instance budget allows, so verdicts would
  // depend on which rules a thread proved before.
  auto prove = [&](int id, const EncodedRule& rule) -> Attempt {
    z3::context ctx;
    z3::params p(ctx);
    SetBudget(p, budget);  // counted per check: the axioms' own check leaves the rule's budget
    // Proofs come from instantiating the axioms on the rule's terms (E-matching);
    // model-based instantiation only searches for counterexamples, which take long.
    p.set("mbqi", false);
    // A budget of instantiations: a rule the axioms prove needs few, and Z3 does not
    // always notice its limits while instantiating, so this is what bounds a failure.
    p.set("qi.max_instances", 10000u);
    Attempt attempt;
    try {
      z3::solver solver(ctx);
      solver.set(p);
      for (const z3::expr& a : ctx.parse_string((axioms.signature + axioms.families).c_str())) solver.add(a);
      solver.check();
      const uint64_t before = ResourceCount(solver);
      solver.push();
      for (const z3::expr& e : ctx.parse_string((axioms.signature + rule.query).c_str())) solver.add(e);
      attempt.result = watchdog.Check(id, ctx, solver, limit);
      attempt.resources = ResourceCount(solver) - before;
    } catch (const z3::exception&) {
      attempt.result = z3::unknown;
    }
    return attempt;
  };
  ParallelForThreads(rules.size(), jobs, [&](int thread, size_t i) {
    const auto start = Clock::now();
    const Attempt a = prove(thread, rules[i]);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    Verdict v = Verdict::kNotProved;
    if (a.result == z3::unsat)
      v = Verdict::kProved;
    else if (a.result == z3::unknown && (a.resources >= budget.rlimit || seconds * 1000 >= budget.timeout_ms))
      v = Verdict::kOverBudget;
    out[i] = {rules[i].name, v, seconds, a.resources};
  });
  return out;
}

}  // namespace taso::verify
