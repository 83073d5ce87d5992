// I_matmul: the identity matrix [n, n], n the last dimension of its source input.
#include "constant_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

struct IMatmul {
  static constexpr const char* kName = op_names::kI_matmul;
  static constexpr const char* kSmt = "imatmul";
  static absl::StatusOr<Shape> FromSource(const Params&, const Shape& src) {
    if (src.size() < 2) return Bad("I_matmul's source must have rank 2 or more");
    return Shape{src.back(), src.back()};
  }
  static absl::Status CheckShape(const Shape& s) {
    if (s.size() != 2 || s[0] != s[1]) return Bad(absl::StrCat("I_matmul shape must be [n,n], got ", ShapeToString(s)));
    return absl::OkStatus();
  }
  static std::vector<DimSource> Sources(int rank) {
    return {DimSource::Copy(0, rank - 1), DimSource::Copy(0, rank - 1)};
  }
  static GeneratorVariant Generated() { return GeneratorVariant{}; }
  template <typename S>
  static void Fill(Tensor<S>& t) {
    for (int64_t i = 0; i < t.shape[0]; ++i) t.data[i * t.shape[0] + i] = Domain<S>::One();
  }
};

TASO_REGISTER_OP(ConstantTensorOp<IMatmul>);

}  // namespace
}  // namespace taso::ops
