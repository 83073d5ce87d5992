// Folding weight-only subgraphs into weights before export (weights are constants at
// inference): every library operator that reads only weights is computed once with the
// reference kernels and replaced by a weight holding its result, under its output's name.
#pragma once

#include "absl/status/statusor.h"
#include "taso/ir/graph.h"

namespace taso {

absl::StatusOr<Graph> FoldWeights(const Graph& graph);

}  // namespace taso
