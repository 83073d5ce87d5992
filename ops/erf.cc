// Erf: the error function element-wise (GELU is built from it). The scalar function is defined per domain
// (scalar_domain.h).
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

struct ErfFn {
  static constexpr const char* kName = op_names::kErf;
  static constexpr bool kInGenerator = false;
  static constexpr const char* kOnnx = "Erf";
  static constexpr double kFlopsPerElement = 4;
  template <typename S>
  static S Apply(S x) {
    return Domain<S>::Erf(x);
  }
};

TASO_REGISTER_OP(UnaryOp<ErfFn>);

}  // namespace
}  // namespace taso::ops
