// The Reshape operator, for generic code that flattens rows and restores their rank
// (taso/passes/row_form.h).
#pragma once

#include "taso/ir/op.h"

namespace taso::ops {

const OpDef& ReshapeOp();

}  // namespace taso::ops
