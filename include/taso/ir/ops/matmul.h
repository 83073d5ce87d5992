// The MatMul operator, for generic code that runs one (the measured costs' reference
// kernel is a matrix product).
#pragma once

#include "taso/ir/op.h"

namespace taso::ops {

const OpDef& MatMulOp();

}  // namespace taso::ops
