// Nested concatenations and splits joined inside the e-graph, after saturation: merges
// of merges (three steps of a sequence merged, then a fourth) leave a Split of a Split's
// piece, whose pieces a single Split of the whole cuts at once. Adding that Split (and
// the Concat of a Concat's inputs spliced in) to the classes they compute lets an
// extraction switch every piece of a merge to one operator in one move, and prices the
// merge as the clean-up after the search (JoinNestedPieces) will write it.
#pragma once

#include <cstdint>

#include "taso/egraph/egraph.h"

namespace taso::egraph {

// Adds the joined forms, pass after pass until none is new or `max_enodes` is reached,
// then rebuilds; the number of e-nodes added.
int64_t AddJoinedPieces(EGraph& egraph, int64_t max_enodes);

}  // namespace taso::egraph
