// Einsums computed as matrix products: each Einsum that one MatMul computes (attention's
// "bhid,bhjd->bhij" and "bhij,bhjd->bhid", a linear map "bnd,de->bne"; the forms are
// include/taso/ir/ops/einsum.h's) becomes Transposes of its operands into MatMul's order,
// one MatMul, and a Transpose of the product into the equation's (ops/einsum.cc builds
// them). ONNX Runtime runs such an Einsum through its general contraction, 1.2-1.5x
// slower than the MatMul (bench/RESULTS.md).
//
// No axiom states Einsum, so this rewrite is not proved: the pipeline offers its result
// as one more graph for the speed check, which self-checks it against the input on the
// reference kernels and writes it only where it runs measurably faster
// (docs/ARCHITECTURE.md, "Rewrites checked only by execution").
#pragma once

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "taso/ir/graph.h"

namespace taso {

// How the pipeline names this rewrite: as an applied rewrite (PipelineResult's
// rules_applied) and as the graph the speed check chose (egraph::Alternative::pricing).
inline constexpr absl::string_view kEinsumProductRewrite = "einsum_as_matmul";
inline constexpr absl::string_view kEinsumsAsProducts = "einsums as matrix products";
// The search's graph with its Einsums as products too (the pricing of that alternative).
inline constexpr absl::string_view kSearchWithEinsumsAsProducts = "the search's graph, einsums as matrix products";

struct EinsumsLowered {
  Graph graph;
  int einsums = 0;  // how many were lowered; 0: `graph` is the input
};

// Every such Einsum of `graph` computed as above.
absl::StatusOr<EinsumsLowered> LowerEinsumsToProducts(const Graph& graph);

}  // namespace taso
