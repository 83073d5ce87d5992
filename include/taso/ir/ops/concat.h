// What generic code (the clean-up of pieces) needs to know of Concat: whether an operator
// is it, and the axis it joins along.
#pragma once

#include <cstdint>

#include "taso/ir/op.h"
#include "taso/ir/params.h"

namespace taso::ops {

bool IsConcat(const OpDef& op);
// The axis a concatenation joins along, as given (possibly negative).
int64_t ConcatAxis(const Params& params);
// The operator, and the parameters of a concatenation along `axis`.
const OpDef& ConcatOperator();
Params ConcatParams(int64_t axis);

}  // namespace taso::ops
