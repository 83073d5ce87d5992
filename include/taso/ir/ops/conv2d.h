// What generic code (the inference fusions) needs to know of Conv2D: whether an operator
// is it, and its fused activation.
#pragma once

#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "taso/ir/op.h"
#include "taso/ir/params.h"

namespace taso::ops {

bool IsConv2D(const OpDef& op);
// A convolution's fused activation as OpDef::AsConvActivation names it ("relu"); empty
// for none.
std::string ConvActivation(const Params& params);
// The convolution's parameters with the fused activation set (empty: none).
Params WithConvActivation(Params params, absl::string_view activation);
// Whether each group of the convolution reads and writes whole blocks of `block`
// channels, or it is dense or depthwise: the convolutions ONNX Runtime's blocked layout
// (NCHWc) takes. False where the inputs make no convolution.
bool GroupsHoldWholeBlocks(const Params& params, absl::Span<const InputInfo> inputs, int64_t block);

}  // namespace taso::ops
