// The LayoutConvert operator and its parameters, for the layout assignment that inserts
// conversions.
#pragma once

#include "taso/ir/op.h"
#include "taso/ir/params.h"

namespace taso::ops {

const OpDef& LayoutConvertOp();
// The parameters of a conversion into the blocked layout, or back into the plain one.
Params LayoutConvertParams(bool to_blocked);

}  // namespace taso::ops
