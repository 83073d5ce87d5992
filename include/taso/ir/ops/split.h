// What generic code (the inference fusions, the clean-up of pieces) needs to know of
// Split: whether an operator is it, the axis it cuts along and the sizes of its pieces.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "taso/ir/op.h"
#include "taso/ir/params.h"

namespace taso::ops {

bool IsSplit(const OpDef& op);
// The axis a split cuts along, as given (possibly negative).
int64_t SplitAxis(const Params& params);
// The sizes of the pieces where the parameters give them (not a sizes input).
std::optional<std::vector<int64_t>> SplitSizes(const Params& params);
// The parameters of a split along `axis` into pieces of `sizes`.
Params SplitParams(int64_t axis, const std::vector<int64_t>& sizes);

}  // namespace taso::ops
