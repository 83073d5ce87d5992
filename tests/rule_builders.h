// Rules written by hand in tests: one operator application, and a rule from its two sides.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "taso/rules/rules.h"

namespace taso::testing {

// An application of library operator `name` to the tensors `inputs` (ids in the rule
// graph: the rule's inputs first, then each operator's outputs).
RuleOp MakeRuleOp(const std::string& name, std::vector<int> inputs, Params params = {}, int outputs = 1);

// A rule over inputs named and shaped as given (none a weight).
Rule MakeRule(const std::string& name, const std::vector<std::pair<std::string, Shape>>& inputs, RuleGraph source,
              RuleGraph target);

}  // namespace taso::testing
