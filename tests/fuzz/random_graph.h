// The rewrite target's graphs: the sources of a few shipped rules, sharing inputs at
// random and at sizes other than the rules' examples, with random library operators
// around them, so that the rules' matches meet the neighbours a real graph gives them.
#pragma once

#include <vector>

#include "fuzz_input.h"
#include "taso/ir/graph.h"
#include "taso/rewrite/match.h"

namespace taso::fuzz {

// The shipped database (rules/), every instance in both directions, prepared once.
const std::vector<RuleMatcher>& ShippedMatchers();

// A graph built from the fuzz input's choices; it has at least one output, or none when
// no choice gave a valid graph.
Graph RandomRuleGraph(FuzzInput& in);

}  // namespace taso::fuzz
