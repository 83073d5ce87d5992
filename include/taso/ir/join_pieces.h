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

// `graph` with each Split whose sizes are a constant input (as exporters write one from
// opset 13) cutting by the same sizes as its parameter, with its data input alone: the
// form the rules, the e-graph's joins of pieces and JoinNestedPieces work on (a merge of
// a product already split with another product of its input is then one product and one
// Split). The constant nothing reads any more is not copied.
absl::StatusOr<Graph> SplitSizesAsParameters(const Graph& graph);

}  // namespace taso
