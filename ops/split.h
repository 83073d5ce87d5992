// What generic code (the inference fusions) needs to know of Split: whether an operator
// is it, and the axis it cuts along.
#pragma once

#include <cstdint>

#include "taso/op.h"
#include "taso/params.h"

namespace taso::ops {

bool IsSplit(const OpDef& op);
// The axis a split cuts along, as given (possibly negative).
int64_t SplitAxis(const Params& params);

}  // namespace taso::ops
