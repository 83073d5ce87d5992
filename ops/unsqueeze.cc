// Unsqueeze: not a library operator; of an int64 constant, or a small float32 one (shape
// arithmetic) it is folded at import: the same values with dimensions of 1 inserted.
#include "shape_fold.h"

namespace taso::ops {
namespace {

std::optional<TensorDataPtr> FoldUnsqueeze(const onnx::NodeProto& node, int opset, const std::vector<InputInfo>& in) {
  if (in.empty()) return std::nullopt;
  const bool floats = SmallFloatConstant(in[0]) != nullptr;
  if (!floats && !Int64Constant(in[0])) return std::nullopt;
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i].present && !Int64Constant(in[i])) return std::nullopt;
  std::optional<std::vector<int64_t>> axes = FoldAxes(node, opset, in);
  if (!axes) return std::nullopt;
  const TensorData& x = *in[0].constant;
  Shape shape = x.shape();
  const int64_t rank = static_cast<int64_t>(shape.size() + axes->size());
  for (int64_t& a : *axes) a = a < 0 ? a + rank : a;
  std::sort(axes->begin(), axes->end());
  for (int64_t a : *axes) {
    if (a < 0 || a > static_cast<int64_t>(shape.size())) return std::nullopt;
    shape.insert(shape.begin() + a, 1);
  }
  if (floats) return TensorData::Float(shape, std::vector<float>(x.floats().begin(), x.floats().end()));
  return TensorData::Int64(shape, std::vector<int64_t>(x.ints().begin(), x.ints().end()));
}
TASO_REGISTER_ONNX_FOLDER("Unsqueeze", FoldUnsqueeze);

}  // namespace
}  // namespace taso::ops
