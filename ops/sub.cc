// Sub: Element-wise subtraction with ONNX broadcasting.
#include "op_util.h"
#include "shape_fold.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

struct SubFn {
  static constexpr const char* kName = op_names::kSub;
  static constexpr bool kInGenerator = false;
  static constexpr const char* kOnnx = "Sub";
  template <typename S>
  static S Apply(S a, S b) {
    return a - b;
  }
};

TASO_REGISTER_OP(BinaryOp<SubFn>);

// On int64 constants (shape arithmetic), folded at import.
std::optional<TensorDataPtr> FoldSub(const onnx::NodeProto&, int, const std::vector<InputInfo>& in) {
  return FoldInt64Binary(in, CheckedSub);
}
TASO_REGISTER_ONNX_FOLDER("Sub", FoldSub);

}  // namespace
}  // namespace taso::ops
