// Sigmoid: the logistic function element-wise. The scalar function is defined per domain (scalar_domain.h).
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

struct SigmoidFn {
  static constexpr const char* kName = op_names::kSigmoid;
  static constexpr bool kInGenerator = false;
  static constexpr const char* kOnnx = "Sigmoid";
  static constexpr double kFlopsPerElement = 4;
  template <typename S>
  static S Apply(S x) {
    return Domain<S>::Sigmoid(x);
  }
};

TASO_REGISTER_OP(UnaryOp<SigmoidFn>);

}  // namespace
}  // namespace taso::ops
