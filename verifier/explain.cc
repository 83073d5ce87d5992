#include "explain.h"

#include <z3++.h>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace taso::verify {
namespace {

// Tracking literals are named apart from the axioms' own :named labels.
std::string TrackingName(const Axiom& axiom) { return absl::StrCat("axiom!", axiom.name); }

}  // namespace

absl::StatusOr<Rule> FindRuleByName(const RuleSet& rules, const std::string& name) {
  const AppliedRuleName wanted = ParseAppliedRuleName(name);
  for (const Rule& rule : rules.rules) {
    if (rule.name != wanted.rule) continue;
    if (rule.name == wanted.concrete) return rule;
    for (Rule& instance : Instances(rule))
      if (instance.name == wanted.concrete) return instance;
  }
  return absl::NotFoundError(absl::StrCat("no rule named '", name, "' in the rules file"));
}

absl::StatusOr<std::vector<const Axiom*>> AxiomsOfProof(const AxiomSet& axioms, const EncodedRule& rule,
                                                        const QueryBudget& budget) {
  z3::context ctx;
  z3::params p(ctx);
  SetBudget(p, budget);
  p.set("mbqi", false);  // as ProveRules: proofs by instantiating the axioms
  p.set("qi.max_instances", 10000u);
  p.set("unsat_core", true);
  p.set("core.minimize", true);
  absl::flat_hash_map<std::string, const Axiom*> by_tracking_name;
  try {
    z3::solver solver(ctx);
    solver.set(p);
    for (const Axiom& axiom : axioms.axioms) {
      by_tracking_name[TrackingName(axiom)] = &axiom;
      for (const z3::expr& form : ctx.parse_string((axioms.signature + axiom.text).c_str()))
        solver.add(form, TrackingName(axiom).c_str());
    }
    for (const z3::expr& e : ctx.parse_string((axioms.signature + rule.query).c_str())) solver.add(e);
    if (solver.check() != z3::unsat)
      return absl::NotFoundError(absl::StrCat("rule ", rule.name, " is not proved within ", budget.rlimit,
                                              " resources and ", budget.timeout_ms, " ms"));
    std::vector<const Axiom*> used;
    for (const z3::expr& literal : solver.unsat_core())
      if (auto it = by_tracking_name.find(literal.decl().name().str()); it != by_tracking_name.end())
        used.push_back(it->second);
    std::sort(used.begin(), used.end());  // axioms.axioms is a vector: address order is file order
    return used;
  } catch (const z3::exception& e) {
    return absl::InternalError(absl::StrCat("Z3: ", e.msg()));
  }
}

}  // namespace taso::verify
