// Div: Element-wise division with ONNX broadcasting.
#include "op_util.h"
#include "shape_fold.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

struct DivFn {
  static constexpr const char* kName = op_names::kDiv;
  static constexpr bool kInGenerator = false;
  static constexpr const char* kOnnx = "Div";
  template <typename S>
  static S Apply(S a, S b) {
    return Domain<S>::Div(a, b);
  }
};

TASO_REGISTER_OP(BinaryOp<DivFn>);

// On int64 constants, or small float32 ones (shape arithmetic), folded at import; a float
// quotient as IEEE division gives it, as every runtime does.
std::optional<TensorDataPtr> FoldDiv(const onnx::NodeProto&, int, const std::vector<InputInfo>& in) {
  if (std::optional<TensorDataPtr> ints = FoldInt64Binary(in, CheckedDiv)) return ints;
  return FoldSmallFloatBinary(in, [](float a, float b) { return a / b; });
}
TASO_REGISTER_ONNX_FOLDER("Div", FoldDiv);

}  // namespace
}  // namespace taso::ops
