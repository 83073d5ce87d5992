// Activations that exporters spell out in primitive operators, made one library operator
// again before the search: GELU (Div, Erf, Add, Mul, Mul from PyTorch below opset 20),
// which ONNX Runtime runs as one fused kernel. Rewrites of its parts (its 0.5 moved into
// the next product's weights) would leave ONNX Runtime four element-wise kernels.
#pragma once

#include "absl/status/statusor.h"
#include "taso/ir/graph.h"

namespace taso {

absl::StatusOr<Graph> FuseSpelledActivations(const Graph& graph);

}  // namespace taso
