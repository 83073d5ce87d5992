#include "prover.h"

#include <chrono>
#include <memory>

#include <z3++.h>

#include "absl/strings/str_cat.h"
#include "taso/parallel.h"
#include "taso/status_macros.h"
#include "watchdog.h"

namespace taso::verify {

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kProved:
      return "proved";
    case Verdict::kNotProved:
      return "not proved";
    case Verdict::kTimedOut:
      return "timed out";
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

std::vector<Outcome> ProveRules(const AxiomSet& axioms, const std::vector<EncodedRule>& rules,
                                const ProveOptions& options) {
  using Clock = std::chrono::steady_clock;
  const int jobs = std::max(1, options.jobs);
  std::vector<Outcome> out(rules.size());
  Z3Watchdog watchdog(jobs);
  const auto limit = std::chrono::milliseconds(options.timeout_ms);
  // Each rule gets a context of its own, with the axioms checked once before the rule is
  // added: a context or solver reused across rules keeps state (term order, learned
  // instances) that changes which proofs the instance budget allows, so verdicts would
  // depend on which rules a thread proved before.
  auto prove = [&](int id, const EncodedRule& rule) -> z3::check_result {
    z3::context ctx;
    z3::params p(ctx);
    p.set("timeout", options.timeout_ms);
    // Proofs come from instantiating the axioms on the rule's terms (E-matching);
    // model-based instantiation only searches for counterexamples, which take long.
    p.set("mbqi", false);
    // A budget of instantiations: a rule the axioms prove needs few, and Z3 does not
    // always notice its timeout while instantiating, so this is what bounds a failure.
    p.set("qi.max_instances", 10000u);
    try {
      z3::solver solver(ctx);
      solver.set(p);
      for (const z3::expr& a : ctx.parse_string((axioms.signature + axioms.families).c_str())) solver.add(a);
      solver.check();
      solver.push();
      for (const z3::expr& e : ctx.parse_string((axioms.signature + rule.query).c_str())) solver.add(e);
      return watchdog.Check(id, ctx, solver, limit);
    } catch (const z3::exception&) {
      return z3::unknown;
    }
  };
  ParallelForThreads(rules.size(), jobs, [&](int thread, size_t i) {
    const auto start = Clock::now();
    const z3::check_result r = prove(thread, rules[i]);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    Verdict v = Verdict::kNotProved;
    if (r == z3::unsat)
      v = Verdict::kProved;
    else if (r == z3::unknown && seconds * 1000 >= options.timeout_ms)
      v = Verdict::kTimedOut;
    out[i] = {rules[i].name, v, seconds};
  });
  return out;
}

}  // namespace taso::verify
