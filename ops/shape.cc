// Shape: not a library operator (an int64 result no kernel computes); with static
// shapes its value is known, so it is folded to a constant at import.
#include "shape_fold.h"

namespace taso::ops {
namespace {

std::optional<TensorDataPtr> FoldShape(const onnx::NodeProto& node, int, const std::vector<InputInfo>& in) {
  if (in.empty() || !in[0].present || !in[0].shape_known) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(in[0].shape.size());
  auto clamp = [rank](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t{0}, rank); };
  const int64_t start = clamp(IntAttribute(node, "start", 0)), end = clamp(IntAttribute(node, "end", rank));
  std::vector<int64_t> dims(in[0].shape.begin() + start, in[0].shape.begin() + std::max(start, end));
  const int64_t n = static_cast<int64_t>(dims.size());
  return TensorData::Int64(Shape{n}, std::move(dims));
}
TASO_REGISTER_ONNX_FOLDER("Shape", FoldShape);

}  // namespace
}  // namespace taso::ops
