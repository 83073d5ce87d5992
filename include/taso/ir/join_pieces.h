// A lossless clean-up of the concatenations and splits that merges leave behind, for
// runtimes that pay for every operator they run (ONNX Runtime: tens of microseconds for
// a Concat or Split of a few rows).
#pragma once

#include "absl/status/statusor.h"
#include "taso/ir/graph.h"

namespace taso {

// `graph` with, until none is left:
//  - a Concat reading a Concat of the same axis that nothing else reads: one Concat of
//    the inner one's inputs in its place;
//  - a Split whose piece only a Split of the same axis cuts again: one Split into all
//    the pieces (the outputs keep their names);
//  - a Concat of all of a Split's pieces in order, along its axis, that nothing else
//    reads: the Split's input in their place (unless the Concat's output is a graph
//    output, whose name must stay).
// Splits whose sizes are an input rather than a parameter are left as they are.
absl::StatusOr<Graph> JoinNestedPieces(const Graph& graph);

}  // namespace taso
