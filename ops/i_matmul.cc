// I_matmul: the identity matrix, shape [n, n].
#include "constant_util.h"

namespace taso::ops {
namespace {

struct IMatmul {
  static constexpr const char* kName = "I_matmul";
  static absl::Status CheckShape(const Shape& s) {
    if (s.size() != 2 || s[0] != s[1]) return Bad(absl::StrCat("I_matmul shape must be [n,n], got ", ShapeToString(s)));
    return absl::OkStatus();
  }
  template <typename S>
  static void Fill(Tensor<S>& t) {
    for (int64_t i = 0; i < t.shape[0]; ++i) t.data[i * t.shape[0] + i] = Domain<S>::One();
  }
};

TASO_REGISTER_OP(ConstantTensorOp<IMatmul>);

}  // namespace
}  // namespace taso::ops
