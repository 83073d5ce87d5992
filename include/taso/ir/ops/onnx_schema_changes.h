// What the installed ONNX library (1.12, opsets up to kMaxCheckedOpset) cannot know about
// later opsets: the operators whose outputs' shapes follow other rules from a later
// version on. ONNX's own shape inference, run with the old schemas, would give wrong
// shapes for them.
#pragma once

#include "absl/strings/string_view.h"

namespace taso::ops {

// True when the ONNX operator `op_type` (default domain) at `opset` has a shape rule
// that differs from its rule at `checked_opset` (attributes that became inputs, new
// attributes that change sizes, other shapes of its inputs).
bool OnnxShapeRuleChanged(absl::string_view op_type, int checked_opset, int opset);

}  // namespace taso::ops
