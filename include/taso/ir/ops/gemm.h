// The Gemm operator, and the linear layer exporters write at ranks above 2 as MatMul and
// Add, for generic code that moves between the two forms (taso/passes/row_form.h).
#pragma once

#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "taso/ir/graph.h"

namespace taso::ops {

const OpDef& GemmOp();

// A product by a matrix and its bias: Add(MatMul(x, W), b) or Add(b, MatMul(x, W)) at node
// `add`, W of rank 2 and b of shape [N] (N: W's columns), the product read by the Add
// alone and no graph output.
struct ProductWithBias {
  NodeId product = kNoNode;
  ValueId x = kNoValue, weights = kNoValue, bias = kNoValue;
};
std::optional<ProductWithBias> MatchProductWithBias(const Graph& graph, const UseIndex& uses, NodeId add);

// Gemm's parameters for x W + b (no transposes, unit scales).
Params ProductWithBiasGemmParams();

// Whether a Gemm with these parameters and inputs is a product with a bias vector (or
// none): A not transposed, unit scales.
bool GemmIsProductWithBias(const Params& params, absl::Span<const InputInfo> inputs);

// Adds Gemm(A, B, C) (`inputs`; C may be absent) as a MatMul of A at A's rank, B
// transposed first where the Gemm transposes it, and an Add of C: what exporters write
// for a linear layer on an activation of rank above 2. The result is named `output_name`;
// `fresh` names what is added between.
absl::StatusOr<ValueId> AddGemmAsProduct(Graph& graph, const Params& params, absl::Span<const ValueId> inputs,
                                         const std::string& node_name, const std::string& output_name,
                                         absl::FunctionRef<std::string(absl::string_view)> fresh);

}  // namespace taso::ops
