// The element-wise Add operator, for generic code that adds one (the inference fusions
// put a convolution's bias back as an Add).
#pragma once

#include "taso/ir/op.h"

namespace taso::ops {

const OpDef& AddOp();

}  // namespace taso::ops
