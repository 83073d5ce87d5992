// Shipped rules found by what they compute, so that tests do not depend on the generated
// rule names (regenerating the database renumbers them). Needs the rule database layer,
// so it is part of taso_tests only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "taso/ir/graph.h"
#include "taso/rules/rules.h"

namespace taso::testing {

// The shipped rule database, rules/taso_k3.pb, read once.
const RuleSet& ShippedRules();
// The shipped database of merges at K=4, rules/gemm_merges_k4.pb, read once.
const RuleSet& ShippedMergeRules();
// rules/gemm_blockdiag_k4.pb: two products on joined inputs as one on block-diagonal weights.
const RuleSet& ShippedBlockDiagRules();

// One side of a rule as text: its outputs in order, comma-separated, each an expression
// over the rule's inputs, "Op{param=value, ...}(arg, ...)", with "[k]" after an operator
// of several outputs for its k-th output. Parameters are written as Params::ToString
// writes values (symbolic sizes left out), and the braces only where there are some.
// E.g. "Add(Split{axis=0}(Concat{axis=0}(B, A))[0], Split{axis=0}(Concat{axis=0}(B, A))[1])".
std::string RuleSideText(const Rule& rule, const RuleGraph& side);

// The shipped rules whose source and target read as `source` and `target` (RuleSideText's
// form, spaces ignored) up to a renaming of the inputs, and whose inputs all have rank
// `input_rank` (-1: any). A description need not give every parameter: those it gives
// must be the rule's. E.g. ("Add(A, B)", "Add(Split(Concat{axis=0}(B, A))[0],
// Split(Concat(B, A))[1])", 2) is the rule writing A + B through a concatenation along
// the first axis, for matrices.
// `database` (null: ShippedRules()) is where to look.
std::vector<const Rule*> ShippedRulesLike(absl::string_view source, absl::string_view target, int input_rank = -1,
                                          const RuleSet* database = nullptr);
// The one shipped rule like that, found by content so that tests do not depend on the
// generated rule names; fails the test when no rule or several rules are like that.
const Rule& ShippedRuleLike(absl::string_view source, absl::string_view target, int input_rank = -1,
                            const RuleSet* database = nullptr);

// `g` with the first match of the first instance of `rule` that matches it rewritten;
// nullopt where no instance matches.
std::optional<Graph> ApplyFirstMatch(const Graph& g, const Rule& rule);

}  // namespace taso::testing
