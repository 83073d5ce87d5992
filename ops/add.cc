// Add: Element-wise addition with ONNX broadcasting.
#include "taso/ir/ops/add.h"
#include "taso/ir/ops/names.h"

#include "op_util.h"
#include "shape_fold.h"

namespace taso::ops {
namespace {

struct AddFn {
  static constexpr const char* kName = op_names::kAdd;
  static constexpr bool kInGenerator = true;
  static constexpr const char* kOnnx = "Add";
  static constexpr const char* kSmt = "ewadd";
  static constexpr bool kChannelShift = true;  // adds a per-channel constant as a bias
  template <typename S>
  static S Apply(S a, S b) {
    return a + b;
  }
};

TASO_REGISTER_OP(BinaryOp<AddFn>);

// On int64 constants (shape arithmetic), folded at import.
std::optional<TensorDataPtr> FoldAdd(const onnx::NodeProto&, int, const std::vector<InputInfo>& in) {
  return FoldInt64Binary(in, CheckedAdd);
}
TASO_REGISTER_ONNX_FOLDER("Add", FoldAdd);

}  // namespace

const OpDef& AddOp() {
  static const OpDef* op = OpRegistry::Global().Find(AddFn::kName);
  return *op;
}

}  // namespace taso::ops
