// Sub: Element-wise subtraction with ONNX broadcasting.
#include "op_util.h"

namespace taso::ops {
namespace {

struct SubFn {
  static constexpr const char* kName = "Sub";
  static constexpr bool kInGenerator = false;
  static constexpr const char* kOnnx = "Sub";
  template <typename S> static S Apply(S a, S b) { return a - b; }
};

TASO_REGISTER_OP(BinaryOp<SubFn>);

}  // namespace
}  // namespace taso::ops
