// Re-running one enumerated graph on given input tensors (any sizes), in the float or
// the uint32 domain, keeping each dimension's concatenation history so split points and
// the symbolic sizes of rules can be read off.
#pragma once

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "enumerator.h"

namespace taso::gen {

// A dimension's history: a leaf (born as dimension `dim` of tensor `tensor`) or the
// concatenation of two dimensions.
struct DimNode {
  int left = -1, right = -1;
  int tensor = 0, dim = 0;
};

template <typename S>
struct Replayed {
  std::vector<Tensor<S>> tensors;          // inputs, then every operator's outputs
  std::vector<std::vector<int>> dims;      // per tensor, per dimension: a DimNode index
  std::vector<DimNode> nodes;
  std::vector<int> outputs;                // the graph's outputs: tensors no operator reads
  std::vector<std::array<int64_t, 2>> cuts;  // per operator: split sizes (0 where none)
  std::vector<int> first_output;           // per operator: the id of its first output
};

// One operator whose outputs are replaced by other values, for checking a generalized
// rule in which they are a fresh input: `fill(k, t)` writes output k (its shape is set).
// Their dimensions have no concatenation history.
template <typename S>
struct ReplacedOp {
  int op = -1;
  std::function<void(int, Tensor<S>&)> fill;
};

// Fails when a shape rule does not hold for these inputs.
template <typename S>
absl::StatusOr<Replayed<S>> Replay(const OpSet& set, const GraphCode& code, const std::vector<Tensor<S>>& inputs,
                                   const ReplacedOp<S>* replaced = nullptr);

// The DimNode leaves under a node, left to right.
void Leaves(const std::vector<DimNode>& nodes, int node, std::vector<DimNode>& out);

}  // namespace taso::gen
