// C_pool: the kernel that turns a depth-wise convolution into average pooling, shape
// [C, 1, kh, kw] with every entry 1/(kh*kw).
#include "constant_util.h"

namespace taso::ops {
namespace {

struct CPool {
  static constexpr const char* kName = "C_pool";
  static absl::Status CheckShape(const Shape& s) {
    if (s.size() != 4 || s[1] != 1) return Bad(absl::StrCat("C_pool shape must be [C,1,kh,kw], got ", ShapeToString(s)));
    return absl::OkStatus();
  }
  template <typename S>
  static void Fill(Tensor<S>& t) {
    std::fill(t.data.begin(), t.data.end(), Domain<S>::InverseCount(t.shape[2] * t.shape[3]));
  }
};

TASO_REGISTER_OP(ConstantTensorOp<CPool>);

}  // namespace
}  // namespace taso::ops
