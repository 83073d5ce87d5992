// Tanh: hyperbolic tangent element-wise. The scalar function is defined per domain (scalar_domain.h).
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

struct TanhFn {
  static constexpr const char* kName = op_names::kTanh;
  static constexpr bool kInGenerator = false;
  static constexpr const char* kOnnx = "Tanh";
  static constexpr double kFlopsPerElement = 4;
  template <typename S>
  static S Apply(S x) {
    return Domain<S>::Tanh(x);
  }
};

TASO_REGISTER_OP(UnaryOp<TanhFn>);

}  // namespace
}  // namespace taso::ops
