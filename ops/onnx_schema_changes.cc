#include "taso/ir/ops/onnx_schema_changes.h"

#include <utility>

namespace taso::ops {

namespace {

// Operator, and the opset from which its shape rule differs from opset 17's (none from 22
// to 26, which changed element types and added operators). Changes
// that only add element types are not listed; operators new after 17 have no schema in
// the installed library, so its inference leaves them alone.
constexpr std::pair<absl::string_view, int> kShapeRuleChanges[] = {
    {"ReduceL1", 18},
    {"ReduceL2", 18},
    {"ReduceLogSum", 18},
    {"ReduceLogSumExp", 18},
    {"ReduceMax", 18},
    {"ReduceMean", 18},
    {"ReduceMin", 18},
    {"ReduceProd", 18},
    {"ReduceSumSquare", 18},
    {"Split", 18},
    {"Pad", 18},
    {"Resize", 18},
    {"LpPool", 18},
    {"ScatterElements", 18},
    {"ScatterND", 18},
    {"AveragePool", 19},
    {"DFT", 20},
    {"GridSample", 20},
    {"GroupNormalization", 21},
    {"QuantizeLinear", 21},
    {"DequantizeLinear", 21},
};

}  // namespace

bool OnnxShapeRuleChanged(absl::string_view op_type, int checked_opset, int opset) {
  for (const auto& [name, since] : kShapeRuleChanges)
    if (name == op_type && since > checked_opset && since <= opset) return true;
  return false;
}

}  // namespace taso::ops
