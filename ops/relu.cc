// Relu: max(0, x) element-wise. The scalar function is defined per domain (scalar_domain.h).
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

struct ReluFn {
  static constexpr const char* kName = op_names::kRelu;
  static constexpr bool kInGenerator = true;
  static constexpr const char* kOnnx = "Relu";
  static constexpr const char* kSmt = "relu";
  static constexpr double kFlopsPerElement = 1;
  static constexpr const char* kConvActivation = "relu";  // Conv2D's fused activation
  template <typename S>
  static S Apply(S x) {
    return Domain<S>::Relu(x);
  }
};

TASO_REGISTER_OP(UnaryOp<ReluFn>);

}  // namespace
}  // namespace taso::ops
