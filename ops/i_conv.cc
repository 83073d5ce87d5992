// I_conv: the identity convolution kernel, shape [C, C, kh, kw] (odd kh, kw), one at the
// centre of the diagonal channel pairs and zero elsewhere; C from its source input.
#include "constant_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

struct IConv {
  static constexpr const char* kName = op_names::kI_conv;
  static constexpr const char* kSmt = "iconv";
  static constexpr bool kSmtTakesKernel = true;
  static absl::StatusOr<Shape> FromSource(const Params& p, const Shape& src) {
    if (src.size() != 4) return Bad("I_conv's source must have rank 4 (NCHW)");
    ASSIGN_OR_RETURN(auto k, KernelParam(p));
    return Shape{src[1], src[1], k[0], k[1]};
  }
  static absl::Status CheckShape(const Shape& s) {
    if (s.size() != 4 || s[0] != s[1] || s[2] % 2 == 0 || s[3] % 2 == 0)
      return Bad(absl::StrCat("I_conv shape must be [C,C,kh,kw] with odd kh and kw, got ", ShapeToString(s)));
    return absl::OkStatus();
  }
  static std::vector<DimSource> Sources(int) { return {DimSource::Copy(0, 1), DimSource::Copy(0, 1), {}, {}}; }
  static GeneratorVariant Generated() {
    return GeneratorVariant{
        .label = "3x3", .params = Params().Set("kernel", std::vector<int64_t>{3, 3}), .roles = {GenRole::kActivation}};
  }
  template <typename S>
  static void Fill(Tensor<S>& t) {
    const int64_t c = t.shape[0], kh = t.shape[2], kw = t.shape[3];
    for (int64_t i = 0; i < c; ++i) t.data[((i * c + i) * kh + kh / 2) * kw + kw / 2] = Domain<S>::One();
  }
};

TASO_REGISTER_OP(ConstantTensorOp<IConv>);

}  // namespace
}  // namespace taso::ops
