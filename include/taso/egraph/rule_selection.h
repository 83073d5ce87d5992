// Which rules an e-graph gains nothing from.
#pragma once

#include <vector>

#include "taso/rewrite/match.h"

namespace taso::egraph {

// Per rule, whether saturation leaves it out:
//  - one of its sides computes a tensor it already has, an input or an earlier
//    operator's output (a Split of a Concat gives the Concat's inputs back; a transpose
//    of a transpose its input), found by running the side's reference kernels on random
//    data at the rule's example shapes. Such a rule restates a smaller one with an
//    identity spelled out: the generator makes many (every Concat and Split pair is
//    equal to its mirror image), and merges' targets hold exactly the patterns their
//    sources match, so they filled the e-graph with reorderings of rows and columns;
//  - its source is an entangled multi-pattern: several roots (operators whose outputs no
//    other source operator reads) and an operator that is not one (two merged products
//    and a concatenation of their inputs beside them). It is a merge and a rewrite of
//    the concatenation at once, each of which the e-graph applies on its own, and
//    matching it costs a join over every pair of products.
std::vector<bool> RedundantInEGraph(const std::vector<RuleMatcher>& rules);

// Per rule, whether it joins work: a multi-pattern whose operators read one input tensor
// in common (two products of one input merged into one), or a rule whose source is one
// Concat of two outputs of one operator, which joins what reads the pieces of a merge
// (two activations as one; two products as one on block-diagonal weights).
std::vector<bool> JoinsWork(const std::vector<RuleMatcher>& rules);

}  // namespace taso::egraph
