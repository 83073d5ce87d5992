// Mul: Element-wise multiplication with ONNX broadcasting.
#include "op_util.h"

namespace taso::ops {
namespace {

struct MulFn {
  static constexpr const char* kName = "Mul";
  static constexpr bool kInGenerator = true;
  static constexpr const char* kOnnx = "Mul";
  static constexpr const char* kSmt = "ewmul";
  static constexpr bool kChannelScale = true;  // scales by a per-channel constant
  template <typename S> static S Apply(S a, S b) { return a * b; }
};

TASO_REGISTER_OP(BinaryOp<MulFn>);

}  // namespace
}  // namespace taso::ops
