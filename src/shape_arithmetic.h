// Shape arithmetic on static shapes: PyTorch exports compute slice bounds and reshape
// targets at run time (Shape -> Gather -> Add/Div/Mul -> Slice). With static input
// shapes those values are known at import, so such an ONNX node becomes a Constant and
// what reads it can be a library operator instead of an opaque node.
#pragma once

#include <optional>
#include <vector>

#include "onnx/onnx_pb.h"
#include "taso/op.h"
#include "taso/tensor.h"

namespace taso {

// The int64 value of `node`'s single output when it is shape arithmetic on known values:
// Shape of a statically shaped tensor, or Gather, Add, Sub, Mul, Div, Unsqueeze, Squeeze,
// Concat or Cast (to int64) of int64 constants. nullopt otherwise (nothing to fold).
std::optional<TensorDataPtr> FoldShapeArithmetic(const onnx::NodeProto& node, int opset,
                                                 const std::vector<InputInfo>& inputs);

}  // namespace taso
