// Equal: not a library operator (its result is bool); of int64 constants (shape
// arithmetic: PyTorch writes `expand(n, -1, -1)` comparing its target with -1) it is folded
// at import to a bool constant.
#include "shape_fold.h"

namespace taso::ops {
namespace {

std::optional<TensorDataPtr> FoldEqual(const onnx::NodeProto&, int, const std::vector<InputInfo>& in) {
  auto equal = Int64Elementwise(in, [](int64_t a, int64_t b) -> std::optional<int64_t> { return a == b; });
  if (!equal) return std::nullopt;
  return BoolTensor(std::move(equal->first), std::vector<bool>(equal->second.begin(), equal->second.end()));
}
TASO_REGISTER_ONNX_FOLDER("Equal", FoldEqual);

}  // namespace
}  // namespace taso::ops
