// Which matches of a multi-pattern rule (several outputs, such as merging two products)
// are worth applying in an e-graph.
#pragma once

#include "taso/egraph/ematch.h"
#include "taso/rules/rules.h"

namespace taso::egraph {

// Whether the match's tensors are independent enough for its target to be of use:
//  - no input of the rule is computed from one of its source outputs: the target
//    computes those outputs from the inputs, so applying it would make a cycle that
//    extraction must reject anyway (two steps of a recurrence, merged);
//  - no non-weight input is another or computed from another: merging the products of x
//    and of a concatenation holding x (merges of merges, overlapping), or of x and of x
//    (a class holds two equal products), computes x's rows twice.
// Searches the e-graph from the inputs down; the cost grows with what lies below them.
bool MatchIsIndependent(const EGraph& eg, const Rule& rule, const EMatch& match);

}  // namespace taso::egraph
