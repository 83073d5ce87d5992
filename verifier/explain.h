// Why a rule holds: the axioms its proof uses, read from Z3's unsat core. The rule is
// proved again as taso-verify proves it (same solver settings and budget), with each
// axiom asserted under its own tracking literal.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "axioms.h"
#include "encode.h"
#include "prover.h"
#include "taso/rules/rules.h"

namespace taso::verify {

// The rule of `rules` named `name`: a rule's name ("r0023": with its variables), an
// instance's ("r0023/0") or either read the other way (a trailing "~", as taso-opt
// prints rules it applied in reverse: an equality's proof is the same either way).
absl::StatusOr<Rule> FindRuleByName(const RuleSet& rules, const std::string& name);

// The axioms the proof of `rule` uses, in the axiom set's order (a minimized unsat core:
// each is needed by the proof Z3 found, not necessarily by every proof). Fails where the
// rule is not proved within `budget` (ProveOptions' by default, as taso-verify proves it).
absl::StatusOr<std::vector<const Axiom*>> AxiomsOfProof(const AxiomSet& axioms, const EncodedRule& rule,
                                                        const QueryBudget& budget);

}  // namespace taso::verify
