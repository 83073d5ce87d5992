// I_ewmul: a tensor of ones, the identity of element-wise multiplication.
#include "constant_util.h"

namespace taso::ops {
namespace {

struct IEwmul {
  static constexpr const char* kName = "I_ewmul";
  static absl::Status CheckShape(const Shape&) { return absl::OkStatus(); }
  template <typename S>
  static void Fill(Tensor<S>& t) {
    std::fill(t.data.begin(), t.data.end(), Domain<S>::One());
  }
};

TASO_REGISTER_OP(ConstantTensorOp<IEwmul>);

}  // namespace
}  // namespace taso::ops
