#include "axiom_checks.h"

#include <chrono>

#include <z3++.h>

#include "taso/ir/parallel.h"
#include "watchdog.h"

namespace taso::verify {
namespace {

// The axioms as expressions of `ctx`, in the set's order.
z3::expr_vector Parse(z3::context& ctx, const AxiomSet& axioms) {
  return ctx.parse_string((axioms.signature + axioms.families).c_str());
}

Finding FromResult(z3::check_result r, z3::check_result yes, z3::check_result no) {
  return r == yes ? Finding::kYes : r == no ? Finding::kNo : Finding::kUnknown;
}

// Consistency: a model exists (model-based instantiation finds one).
Finding CheckConsistent(const AxiomSet& axioms, unsigned timeout_ms) {
  z3::context ctx;
  z3::solver s(ctx);
  z3::params p(ctx);
  p.set("timeout", timeout_ms);
  s.set(p);
  for (const z3::expr& a : Parse(ctx, axioms)) s.add(a);
  return FromResult(s.check(), z3::sat, z3::unsat);
}

// Whether axiom i follows from the others: they and its negation are unsat. A fresh
// context per query: one shared between queries keeps state (term order, learned
// instances) that changes what the next query can show within its limit.
Finding CheckEntailed(const AxiomSet& axioms, size_t i, const AxiomCheckOptions& options, Z3Watchdog& watchdog,
                      int slot) {
  try {
    z3::context ctx;
    const z3::expr_vector all = Parse(ctx, axioms);
    if (all.size() != axioms.axioms.size()) return Finding::kUnknown;
    z3::params p(ctx);
    p.set("rlimit", options.rlimit);
    p.set("mbqi", false);  // proofs come from E-matching; counterexamples take long
    p.set("qi.max_instances", 3000u);
    z3::solver s(ctx);
    s.set(p);
    for (unsigned j = 0; j < all.size(); ++j)
      if (j != i) s.add(all[j]);
    s.add(!all[static_cast<unsigned>(i)]);
    return FromResult(watchdog.Check(slot, ctx, s, std::chrono::milliseconds(options.wall_limit_ms)), z3::unsat,
                      z3::sat);
  } catch (const z3::exception&) {
    return Finding::kUnknown;
  }
}

}  // namespace

AxiomCheckReport CheckAxiomSet(const AxiomSet& axioms, const AxiomCheckOptions& options) {
  AxiomCheckReport report;
  report.consistent = CheckConsistent(axioms, options.timeout_ms);
  const size_t n = axioms.axioms.size();
  const int jobs = std::max(1, options.jobs);
  std::vector<Finding> entailed(n, Finding::kUnknown);
  Z3Watchdog watchdog(jobs);
  ParallelForThreads(n, jobs,
                     [&](int thread, size_t i) { entailed[i] = CheckEntailed(axioms, i, options, watchdog, thread); });
  for (size_t i = 0; i < n; ++i) {
    const std::string& name = axioms.axioms[i].name;
    if (entailed[i] == Finding::kYes) report.redundant.push_back(name);
    if (entailed[i] == Finding::kNo) report.independent.push_back(name);
    if (entailed[i] == Finding::kUnknown) report.undecided.push_back(name);
  }
  return report;
}

}  // namespace taso::verify
