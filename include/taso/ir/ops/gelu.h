// What generic code (the activation fusion after import) needs to know of Gelu: the
// operator, and where a graph spells it out in primitive operators, as PyTorch exports
// it below opset 20.
#pragma once

#include <optional>
#include <vector>

#include "taso/ir/graph.h"
#include "taso/ir/op.h"

namespace taso::ops {

const OpDef& GeluOp();

// GELU spelled out, x * 0.5 * (1 + erf(x / sqrt 2)): the input, the output, and the
// nodes that compute it (the last one computes the output).
struct SpelledGelu {
  ValueId x = kNoValue;
  ValueId y = kNoValue;
  std::vector<NodeId> nodes;
};
// The GELU whose Erf is node `erf`, where the nodes around it spell one: x divided by
// sqrt 2 (or multiplied by its inverse), the Erf, plus 1, times x, times 0.5 (or x
// times 0.5 first), each intermediate read by the next node only.
std::optional<SpelledGelu> MatchSpelledGelu(const Graph& graph, const UseIndex& uses, NodeId erf);

}  // namespace taso::ops
