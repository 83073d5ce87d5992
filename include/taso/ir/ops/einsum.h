// What the lowering of Einsum to matrix products (taso/passes/einsum_products.h) needs of
// the Einsum operator: the product it states, as Transposes around one MatMul.
#pragma once

#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "taso/ir/graph.h"

namespace taso::ops {

// Adds to `graph` what Einsum node `einsum` of `old` computes, reading `a` and `b` (the
// graph's values of its operands): each operand transposed to MatMul's order, their
// MatMul, and the product transposed to the equation's output order (each Transpose only
// where the order differs), the last value named `output_name` and the others by `fresh`
// (a name from a base). The forms one MatMul computes: one row, one column and one summed
// letter with any batch letters (attention's "bhid,bhjd->bhij", "bij,bjd->bid"); and,
// with no batch letter, one summed letter with several rows and one column ("bnd,de->bne",
// a linear map) or one row and several columns. Nullopt for any other node or form
// (others would need Reshapes of sizes that may be symbolic).
absl::StatusOr<std::optional<ValueId>> AddEinsumAsMatMul(const Graph& old, NodeId einsum, Graph& graph, ValueId a,
                                                         ValueId b, const std::string& output_name,
                                                         absl::FunctionRef<std::string(absl::string_view)> fresh);

}  // namespace taso::ops
