// Add: Element-wise addition with ONNX broadcasting.
#include "op_util.h"

namespace taso::ops {
namespace {

struct AddFn {
  static constexpr const char* kName = "Add";
  static constexpr bool kInGenerator = true;
  static constexpr const char* kOnnx = "Add";
  static constexpr const char* kSmt = "ewadd";
  static constexpr bool kChannelShift = true;  // adds a per-channel constant as a bias
  template <typename S> static S Apply(S a, S b) { return a + b; }
};

TASO_REGISTER_OP(BinaryOp<AddFn>);

}  // namespace
}  // namespace taso::ops
