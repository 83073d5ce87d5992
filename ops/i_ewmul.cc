// I_ewmul: a tensor of ones (the identity of element-wise multiplication), shaped like its
// source input.
#include "constant_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

struct IEwmul {
  static constexpr const char* kName = op_names::kI_ewmul;
  static constexpr const char* kSmt = "iewmul";
  static absl::StatusOr<Shape> FromSource(const Params&, const Shape& src) { return src; }
  static absl::Status CheckShape(const Shape&) { return absl::OkStatus(); }
  static std::vector<DimSource> Sources(int rank) {
    std::vector<DimSource> d;
    for (int i = 0; i < rank; ++i) d.push_back(DimSource::Copy(0, i));
    return d;
  }
  static GeneratorVariant Generated() { return GeneratorVariant{}; }
  template <typename S>
  static void Fill(Tensor<S>& t) {
    std::fill(t.data.begin(), t.data.end(), Domain<S>::One());
  }
};

TASO_REGISTER_OP(ConstantTensorOp<IEwmul>);

}  // namespace
}  // namespace taso::ops
