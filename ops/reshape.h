// The Reshape operator, for generic code that flattens rows and restores their rank
// (taso/row_form.h).
#pragma once

#include "taso/op.h"

namespace taso::ops {

const OpDef& ReshapeOp();

}  // namespace taso::ops
