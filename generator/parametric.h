// Parametric rules: rules that differ only in operator parameters (a convolution's stride,
// padding or activation, a pool's stride and padding, an axis) and that were found for
// every combination of the values they take become one rule with variables.
#pragma once

#include <vector>

#include "canonical.h"
#include "taso/rules.h"

namespace taso::gen {

// `rules[i]` is `found[i]` written out. Returns the rules with each complete family merged
// into its first member, in the order of their first members; names are left to the caller.
std::vector<Rule> MergeParameters(const OpSet& set, const std::vector<PRule>& found, std::vector<Rule> rules);

}  // namespace taso::gen
