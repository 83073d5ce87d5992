#include "axiom_checks.h"

#include <atomic>
#include <thread>
#include <vector>

#include <z3++.h>

namespace taso::verify {
namespace {

// The axioms as expressions of `ctx`, in the set's order.
z3::expr_vector Parse(z3::context& ctx, const AxiomSet& axioms) {
  return ctx.parse_string((axioms.signature + axioms.families).c_str());
}

}  // namespace

AxiomCheckReport CheckAxiomSet(const AxiomSet& axioms, unsigned timeout_ms, int jobs) {
  AxiomCheckReport report;
  {
    // Consistency: a model exists (model-based instantiation finds one).
    z3::context ctx;
    z3::solver s(ctx);
    z3::params p(ctx);
    p.set("timeout", timeout_ms);
    s.set(p);
    for (const z3::expr& a : Parse(ctx, axioms)) s.add(a);
    const z3::check_result r = s.check();
    report.consistent = r == z3::sat ? Finding::kYes : r == z3::unsat ? Finding::kNo : Finding::kUnknown;
  }
  // Redundancy: axiom i follows from the others when they and its negation are unsat.
  const size_t n = axioms.axioms.size();
  std::vector<Finding> entailed(n, Finding::kUnknown);
  std::atomic<size_t> next{0};
  auto work = [&] {
    z3::context ctx;
    const z3::expr_vector all = Parse(ctx, axioms);
    z3::params p(ctx);
    p.set("timeout", timeout_ms);
    p.set("mbqi", false);
    p.set("qi.max_instances", 3000u);
    for (size_t i; (i = next.fetch_add(1)) < n && i < all.size();) {
      z3::solver s(ctx);
      s.set(p);
      for (unsigned j = 0; j < all.size(); ++j)
        if (j != i) s.add(all[j]);
      s.push();
      s.add(!all[static_cast<unsigned>(i)]);
      const z3::check_result r = s.check();
      entailed[i] = r == z3::unsat ? Finding::kYes : r == z3::sat ? Finding::kNo : Finding::kUnknown;
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::max(1, jobs); ++t) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
  for (size_t i = 0; i < n; ++i)
    if (entailed[i] == Finding::kYes) report.redundant.push_back(axioms.axioms[i].name);
  return report;
}

}  // namespace taso::verify
