// Cast: not a library operator; of shape arithmetic it is folded at import: int64 to
// int64 (as exports do around shape arithmetic), and between int64 and float32 (or float32
// to float32) for small constants (torchvision's detection transform rounds sizes up
// through floats).
#include <cmath>

#include "shape_fold.h"

namespace taso::ops {
namespace {

// int64 -> float32 rounds to nearest, as C++ and ONNX Runtime do; float32 -> int64
// truncates, and is left to run time for a value that is not finite or does not fit.
std::optional<TensorDataPtr> FoldCast(const onnx::NodeProto& node, int, const std::vector<InputInfo>& in) {
  if (in.size() != 1) return std::nullopt;
  const int64_t to = IntAttribute(node, "to", 0);
  if (const TensorData* x = Int64Constant(in[0])) {
    if (to == onnx::TensorProto::INT64) return TensorData::Int64(x->shape(), {x->ints().begin(), x->ints().end()});
    if (to != onnx::TensorProto::FLOAT || x->numel() > kMaxFoldedElements) return std::nullopt;
    std::vector<float> values;
    for (int64_t v : x->ints()) values.push_back(static_cast<float>(v));
    return TensorData::Float(x->shape(), std::move(values));
  }
  const TensorData* x = SmallFloatConstant(in[0]);
  if (x == nullptr) return std::nullopt;
  if (to == onnx::TensorProto::FLOAT) return TensorData::Float(x->shape(), {x->floats().begin(), x->floats().end()});
  if (to != onnx::TensorProto::INT64) return std::nullopt;
  std::vector<int64_t> values;
  for (float v : x->floats()) {
    // 2^63 is a float exactly; every float below it in magnitude fits.
    if (!std::isfinite(v) || std::fabs(v) >= 9223372036854775808.0f) return std::nullopt;
    values.push_back(static_cast<int64_t>(v));
  }
  return TensorData::Int64(x->shape(), std::move(values));
}
TASO_REGISTER_ONNX_FOLDER("Cast", FoldCast);

}  // namespace
}  // namespace taso::ops
