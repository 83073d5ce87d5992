// Pow: Element-wise power with ONNX broadcasting.
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

struct PowFn {
  static constexpr const char* kName = op_names::kPow;
  static constexpr bool kInGenerator = false;
  static constexpr const char* kOnnx = "Pow";
  template <typename S>
  static S Apply(S a, S b) {
    return Domain<S>::Pow(a, b);
  }
};

TASO_REGISTER_OP(BinaryOp<PowFn>);

}  // namespace
}  // namespace taso::ops
