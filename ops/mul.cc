// Mul: Element-wise multiplication with ONNX broadcasting.
#include "op_util.h"
#include "shape_fold.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

struct MulFn {
  static constexpr const char* kName = op_names::kMul;
  static constexpr bool kInGenerator = true;
  static constexpr const char* kOnnx = "Mul";
  static constexpr const char* kSmt = "ewmul";
  static constexpr bool kChannelScale = true;  // scales by a per-channel constant
  template <typename S>
  static S Apply(S a, S b) {
    return a * b;
  }
};

TASO_REGISTER_OP(BinaryOp<MulFn>);

// On int64 constants, or small float32 ones (shape arithmetic), folded at import.
std::optional<TensorDataPtr> FoldMul(const onnx::NodeProto&, int, const std::vector<InputInfo>& in) {
  if (std::optional<TensorDataPtr> ints = FoldInt64Binary(in, CheckedMul)) return ints;
  return FoldSmallFloatBinary(in, [](float a, float b) { return a * b; });
}
TASO_REGISTER_ONNX_FOLDER("Mul", FoldMul);

}  // namespace
}  // namespace taso::ops
