// C_pool: the kernel that turns a depth-wise convolution into average pooling, shape
// [C, 1, kh, kw] with every entry 1/(kh*kw); C is the channel count of its source input.
#include "constant_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

struct CPool {
  static constexpr const char* kName = op_names::kC_pool;
  static constexpr const char* kSmt = "cpool";
  static constexpr bool kSmtTakesKernel = true;
  static absl::StatusOr<Shape> FromSource(const Params& p, const Shape& src) {
    if (src.size() != 4) return Bad("C_pool's source must have rank 4 (NCHW)");
    ASSIGN_OR_RETURN(auto k, KernelParam(p));
    return Shape{src[1], 1, k[0], k[1]};
  }
  static absl::Status CheckShape(const Shape& s) {
    if (s.size() != 4 || s[1] != 1)
      return Bad(absl::StrCat("C_pool shape must be [C,1,kh,kw], got ", ShapeToString(s)));
    return absl::OkStatus();
  }
  static std::vector<DimSource> Sources(int) { return {DimSource::Copy(0, 1), {}, {}, {}}; }
  static GeneratorVariant Generated() {
    return GeneratorVariant{
        .label = "3x3", .params = Params().Set("kernel", std::vector<int64_t>{3, 3}), .roles = {GenRole::kActivation}};
  }
  template <typename S>
  static void Fill(Tensor<S>& t) {
    std::fill(t.data.begin(), t.data.end(), Domain<S>::InverseCount(t.shape[2] * t.shape[3]));
  }
};

TASO_REGISTER_OP(ConstantTensorOp<CPool>);

}  // namespace
}  // namespace taso::ops
