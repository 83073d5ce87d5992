// Nested concatenations and splits joined inside the e-graph, after saturation: merges
// of merges (three steps of a sequence merged, then a fourth) leave a Split of a Split's
// piece, whose pieces a single Split of the whole cuts at once. Adding that Split (and
// the Concat of a Concat's inputs spliced in) to the classes they compute lets an
// extraction switch every piece of a merge to one operator in one move, and prices the
// merge as the clean-up after the search (JoinNestedPieces) will write it.
#pragma once

#include <cstdint>

#include "taso/egraph/derivation.h"
#include "taso/egraph/egraph.h"

namespace taso::egraph {

// Adds the joined forms, pass after pass until none is new, then rebuilds: the Splits
// while the e-graph has fewer than `max_split_enodes` e-nodes, then the Concats while it
// has fewer than `max_concat_enodes`. The number of e-nodes added.
int64_t AddJoinedPieces(EGraph& egraph, int64_t max_split_enodes, int64_t max_concat_enodes);

// The readers of a split's pieces joined, during saturation. Where a Split cuts X into
// two pieces and e-nodes of one operator and parameters read one piece each, their
// outputs concatenated and split again are those outputs (a split undoes a
// concatenation), and the pieces concatenated are X. Adding those e-nodes lets rules
// whose source is a concatenation of two results merge the work that reads the pieces
// of a merge: two products of the pieces into one of X with the weights on a block
// diagonal (task heads), two activations of them into one of X. No rule can start from
// two separate results. One pass, then a rebuild; the e-nodes added, each recorded in
// `derivation` (when given) as derived from the two readers.
int64_t AddJoinedReaders(EGraph& egraph, int64_t max_enodes, Derivation* derivation);

}  // namespace taso::egraph
