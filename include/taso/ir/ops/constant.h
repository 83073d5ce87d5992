// The Constant operator, for code outside ops/ that turns a known tensor into a node
// (e.g. the ONNX import folding shape arithmetic).
#pragma once

#include "taso/ir/op.h"

namespace taso::ops {

// The registered Constant operator.
const OpDef* ConstantOp();

// Constant's parameters for a node that produces `value`.
Params ConstantParams(TensorDataPtr value);

}  // namespace taso::ops
