// Inference-time fusions around convolutions, which the rule database cannot state
// (its convolutions have no bias, and it has no batch normalization):
//   - FuseIntoConvolutions folds what follows a convolution into it: a batch
//     normalization with constant statistics (into weights and bias), an Add of a
//     per-channel constant (into the bias) and then a Relu (as its activation). Through
//     a channel Split whose every piece is followed alike, the pieces' biases are
//     concatenated. Only a chain nothing else reads is folded.
//   - SeparateConvolutionBias undoes the bias and activation of every convolution whose
//     bias-free form the rules match: Conv -> Add(bias [1,C,1,1]) -> Relu. taso-opt runs
//     it before the search and FuseIntoConvolutions after, so rewrites such as merging
//     convolutions that share an input apply to convolutions with biases.
#pragma once

#include "absl/status/statusor.h"
#include "taso/ir/graph.h"

namespace taso {

absl::StatusOr<Graph> FuseIntoConvolutions(const Graph& graph);
absl::StatusOr<Graph> SeparateConvolutionBias(const Graph& graph);

}  // namespace taso
