// Where a rule's source occurs in an e-graph: its operators bound to e-nodes one after the
// other (a rule with several outputs is a multi-pattern: its roots are matched together),
// each e-node's children binding the rule tensors they stand for.
#pragma once

#include <chrono>
#include <vector>

#include "taso/egraph/egraph.h"
#include "taso/rewrite/match.h"

namespace taso::egraph {

struct EMatch {
  std::vector<ENodeId> nodes;    // per source operator (its first output's e-node)
  std::vector<ClassId> tensors;  // per source tensor: the rule's inputs, then its operators' outputs
};

// Every match of the rule's source in the e-graph as of its last Rebuild, in a
// deterministic order. Operators match as RuleMatcher's do: the same operator, its rule
// form equal to the rule's parameters resolved at the matched shapes, the variant's
// shape conditions, commutative operators in both orders; distinct source operators
// bind distinct e-nodes. Stops early (returning what it found) at `deadline` or once it
// found `max_matches`.
std::vector<EMatch> FindMatches(const EGraph& egraph, const RuleMatcher& rule,
                                std::chrono::steady_clock::time_point deadline, int64_t max_matches);

}  // namespace taso::egraph
