// The rules taso-gen finds that a shipped database leaves out, proved again from the
// axioms: a database made by taso-verify --write-proved leaves out exactly the rules it
// could not prove, so none of them may be proved now (if one is, the axioms have grown
// and the database must be regenerated, as rules/README.md says).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "prover.h"
#include "taso/rules/rules.h"

namespace taso::testing {

// The outcomes of proving every rule of `generated` whose name `shipped` does not hold,
// and those named in `also`: a shipped rule treated as left out, to show the test can
// fail. Fails the test (REQUIRE) where the axioms or the rules cannot be read.
std::vector<verify::Outcome> ProveLeftOut(const RuleSet& generated, const RuleSet& shipped,
                                          const std::set<std::string>& also = {});

// Checks that none of `outcomes` is proved, naming the database to regenerate.
void CheckNoneProved(const std::vector<verify::Outcome>& outcomes, const std::string& database);

}  // namespace taso::testing
