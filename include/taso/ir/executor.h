// The reference executor: runs a graph with the operators' reference kernels.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "taso/ir/graph.h"

namespace taso {

using TensorMap = std::map<std::string, Tensor<float>>;

// The data given for graph input `input`, checked against its shape; null for a weight
// given none (it keeps its initializer). Every executor reads its inputs so.
absl::StatusOr<const Tensor<float>*> GivenInput(const Graph& graph, ValueId input, const TensorMap& inputs);

// Runs `graph` on the given inputs (by input name) and returns its outputs by name.
// Fails with a clear error on a missing or mis-shaped input or an opaque node.
absl::StatusOr<TensorMap> RunReference(const Graph& graph, const TensorMap& inputs);

// The values a reference run reads for float value `v`: values[v] when computed or fed,
// else (a weight nothing fed) the weight's own data, read in place, mapped from its file or
// in memory: runs of a model with 85M weights copy none of them.
TensorView<float> ReferenceOperand(const Graph& graph, ValueId v, const std::vector<Tensor<float>>& values);

// Runs one node's reference kernel on `values` (indexed by value id): its float inputs are
// read there (ReferenceOperand) and its outputs written there, zeroed first (reference kernels may
// accumulate) and in place when already of their shape, so storage that an executor
// points at stays where it is. An error names the node.
absl::Status RunReferenceNode(const Graph& graph, const Node& node, std::vector<Tensor<float>>& values);

// Runs one operator on numeric inputs in domain S (float or uint32): checks and infers
// the output types, then runs the reference kernel.
template <typename S>
absl::StatusOr<std::vector<Tensor<S>>> RunOp(const OpDef& op, const Params& params,
                                             const std::vector<KernelInput<S>>& inputs);

// Deterministic random inputs, uniform in [-scale, scale], for every float run-time input
// of a graph, initializers that are also inputs included (their defaults are overridden).
TensorMap RandomInputs(const Graph& graph, uint64_t seed, double scale = 1.0);

// Largest absolute difference between two sets of outputs (infinity on a mismatch of
// names or shapes, or a NaN).
double MaxAbsDifference(const TensorMap& a, const TensorMap& b);
// MaxAbsDifference relative to the size of the expected outputs (their largest magnitude,
// at least 1): rewrites and other kernels sum in other orders.
double RelativeDifference(const TensorMap& expected, const TensorMap& got);

}  // namespace taso
