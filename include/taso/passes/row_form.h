// Products at any rank, for the rules (docs/ARCHITECTURE.md, "Products at any rank").
//
// Exporters write a linear layer on an activation of rank 3 or more ([batch, tokens,
// features]) as MatMul(x, W) + Add(b), W a matrix; the rules state products of matrices.
// A "row tensor" is an activation [L..., f] whose leading dimensions L only count rows:
// every node of a row-wise region (products by a matrix, their biases, element-wise
// operators, scalar scales, concatenations and splits of the last axis, softmax and
// normalization over it) computes the same on [prod(L), f].
#pragma once

#include "absl/status/statusor.h"
#include "taso/ir/graph.h"

namespace taso {

// Before the search: each connected row-wise region that holds a product of a row tensor
// by a matrix is computed on [rows, features]: a Reshape in where a row tensor enters
// the region, a Reshape out (under the value's name) where one leaves it or is a graph
// output, and each product read only by its bias Add becomes one Gemm. A graph without
// such a product is returned as it is.
absl::StatusOr<Graph> FlattenRowRegions(const Graph& graph);

// After the search: the rank is given back to every row-wise node whose rows came from a
// flattening Reshape and reach a Reshape again (a Gemm becomes MatMul and Add); the
// Reshapes that then meet the rows' own shape cancel. What reads rows the node cannot
// take at the higher rank (rows stacked by a rewrite, say) reads them flattened.
absl::StatusOr<Graph> RestoreRowRank(const Graph& graph);

}  // namespace taso
