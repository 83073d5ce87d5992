// What the merge of gated mixtures (taso/passes/rewrite_gated_mixtures.h) needs of the operators
// it reads and writes: sums, one column of a gate scaling a linear layer, the activation
// between two layers, and the merged form of Concat, Reshape, Mul and Gemm.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "taso/ir/graph.h"

namespace taso::ops {

// The operands of an Add of two float values of one shape (no broadcasting); nullopt for
// any other node.
std::optional<std::pair<ValueId, ValueId>> SameShapeSum(const Graph& graph, NodeId n);

// A linear layer in either form exporters write: a Gemm of unit scales whose activation
// is not transposed (rank 2), or MatMul(x, W) with an Add of its bias or none (x of any
// rank from 2); W a constant matrix, the bias a constant vector (or none).
struct LinearLayer {
  NodeId node = kNoNode;     // the node giving the layer's output: the Gemm, or the Add
  NodeId product = kNoNode;  // the Gemm or the MatMul
  ValueId x = kNoValue, weights = kNoValue, bias = kNoValue;  // bias: kNoValue if none
  Params params;                                              // the Gemm's
  bool gemm = true;
};
std::optional<LinearLayer> MatchLinearLayer(const Graph& graph, const UseIndex& uses, NodeId n);

// Whether two layers can be computed as one: same form and parameters, weights of one
// shape, and a bias in both or in neither.
bool LayersAlike(const Graph& graph, const LinearLayer& a, const LinearLayer& b);

// gate[..., column:column+1] * layer(h), the two factors in either order: a Slice of one
// column (step 1) of a gate along its last axis, times a linear layer of the same leading
// dimensions read by this Mul alone.
struct GatedTerm {
  NodeId mul = kNoNode, slice = kNoNode;
  ValueId gate = kNoValue;
  int64_t column = 0;
  LinearLayer layer;
};
std::optional<GatedTerm> MatchGatedTerm(const Graph& graph, const UseIndex& uses, NodeId mul);

// An element-wise activation (Relu, Gelu, Sigmoid, Tanh) of one input: the activation of
// a concatenation is the concatenation of the activations.
bool IsElementwiseActivation(const Node& node);

// The new graph's value of one old layer's weights and bias (kNoValue where none).
struct LayerWeights {
  ValueId weights = kNoValue, bias = kNoValue;
};

// Adds x W + b for the layers side by side, in the form of `like` (a Gemm with its
// parameters, or MatMul and Add): one product of the weights and biases concatenated
// along the output features. `fresh` names what is added.
absl::StatusOr<ValueId> AddSideBySide(Graph& graph, ValueId x, const std::vector<LayerWeights>& layers,
                                      const LinearLayer& like, absl::FunctionRef<std::string(absl::string_view)> fresh);

// Adds sum_e gate[..., e] * (hidden_e W_e + b_e) for `hidden` = [hidden_0 ... hidden_n-1]
// side by side ([..., n * h]) and gate [..., n]: the hidden units viewed [..., n, h] and
// scaled by the gate in one Mul, one product of the stacked weights in the form of `like`,
// plus the gate times the stacked biases (a Gemm's C, or an Add). The result is named
// `output_name`.
absl::StatusOr<ValueId> AddGatedStack(Graph& graph, ValueId hidden, ValueId gate,
                                      const std::vector<LayerWeights>& layers, const LinearLayer& like,
                                      const std::string& output_name,
                                      absl::FunctionRef<std::string(absl::string_view)> fresh);

}  // namespace taso::ops
