// Sqrt: square root element-wise. The scalar function is defined per domain (scalar_domain.h).
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

struct SqrtFn {
  static constexpr const char* kName = op_names::kSqrt;
  static constexpr bool kInGenerator = false;
  static constexpr const char* kOnnx = "Sqrt";
  static constexpr double kFlopsPerElement = 2;
  template <typename S>
  static S Apply(S x) {
    return Domain<S>::Sqrt(x);
  }
};

TASO_REGISTER_OP(UnaryOp<SqrtFn>);

}  // namespace
}  // namespace taso::ops
