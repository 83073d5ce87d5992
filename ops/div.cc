// Div: Element-wise division with ONNX broadcasting.
#include "op_util.h"

namespace taso::ops {
namespace {

struct DivFn {
  static constexpr const char* kName = "Div";
  static constexpr bool kInGenerator = false;
  static constexpr const char* kOnnx = "Div";
  template <typename S> static S Apply(S a, S b) { return Domain<S>::Div(a, b); }
};

TASO_REGISTER_OP(BinaryOp<DivFn>);

}  // namespace
}  // namespace taso::ops
