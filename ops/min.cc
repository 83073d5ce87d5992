// Min: not a library operator; of two int64 or small float32 constants (shape arithmetic:
// torchvision's detection transform scales an image by min(800 / its shorter side, 1333 /
// its longer)) it is folded at import, NaN where either is. ONNX's Min takes any number of
// inputs; more than two stay to run time.
#include <algorithm>
#include <cmath>

#include "shape_fold.h"

namespace taso::ops {
namespace {

std::optional<TensorDataPtr> FoldMin(const onnx::NodeProto&, int, const std::vector<InputInfo>& in) {
  if (std::optional<TensorDataPtr> ints =
          FoldInt64Binary(in, [](int64_t a, int64_t b) -> std::optional<int64_t> { return std::min(a, b); }))
    return ints;
  return FoldSmallFloatBinary(in,
                              [](float a, float b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); });
}
TASO_REGISTER_ONNX_FOLDER("Min", FoldMin);

}  // namespace
}  // namespace taso::ops
