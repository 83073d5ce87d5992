// Folding weight-only subgraphs into weights before export (weights are constants at
// inference): every library operator that reads only weights is computed once with the
// reference kernels and replaced by a weight holding its result, under its output's name.
#pragma once

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "taso/ir/graph.h"

namespace taso {

// `node`'s reference kernel run on inputs known ahead of time, as FoldWeights runs it:
// `value_of(v)` gives a float input's values, read in place (none where they are not
// known, which fails); an input the operator reads only the shape of is given a tensor of
// its shape.
absl::StatusOr<std::vector<Tensor<float>>> RunOnKnownInputs(const Graph& graph, const Node& node,
                                                            const std::function<KernelInput<float>(ValueId)>& value_of);

absl::StatusOr<Graph> FoldWeights(const Graph& graph);

}  // namespace taso
