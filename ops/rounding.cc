// Ceil, Floor and Reciprocal: not library operators; of a small float32 constant (shape
// arithmetic: torchvision's detection transform scales an image by 800 / its shorter side,
// floored, and pads it to ceil(size / 32) * 32) they are folded at import, each as one
// float32 operation, as runtimes compute them.
#include <cmath>

#include "shape_fold.h"

namespace taso::ops {
namespace {

template <typename Fn>
std::optional<TensorDataPtr> FoldSmallFloatUnary(const std::vector<InputInfo>& in, Fn fn) {
  const TensorData* x = in.size() == 1 ? SmallFloatConstant(in[0]) : nullptr;
  if (x == nullptr) return std::nullopt;
  std::vector<float> values;
  for (float v : x->floats()) values.push_back(fn(v));
  return TensorData::Float(x->shape(), std::move(values));
}

std::optional<TensorDataPtr> FoldCeil(const onnx::NodeProto&, int, const std::vector<InputInfo>& in) {
  return FoldSmallFloatUnary(in, [](float v) { return std::ceil(v); });
}
TASO_REGISTER_ONNX_FOLDER("Ceil", FoldCeil);

std::optional<TensorDataPtr> FoldFloor(const onnx::NodeProto&, int, const std::vector<InputInfo>& in) {
  return FoldSmallFloatUnary(in, [](float v) { return std::floor(v); });
}
TASO_REGISTER_ONNX_FOLDER("Floor", FoldFloor);

std::optional<TensorDataPtr> FoldReciprocal(const onnx::NodeProto&, int, const std::vector<InputInfo>& in) {
  return FoldSmallFloatUnary(in, [](float v) { return 1.0f / v; });
}
TASO_REGISTER_ONNX_FOLDER("Reciprocal", FoldReciprocal);

}  // namespace
}  // namespace taso::ops
