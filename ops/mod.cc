// Mod: not a library operator; of int64 constants (shape arithmetic: torchvision's Swin
// pads a map to a multiple of its window, `(w - W % w) % w`) it is folded at import.
#include "shape_fold.h"

namespace taso::ops {
namespace {

// ONNX's integer Mod: the remainder takes the divisor's sign (as Python's %), or the
// dividend's where fmod is 1 (as C's %); nullopt on division by zero.
std::optional<TensorDataPtr> FoldMod(const onnx::NodeProto& node, int, const std::vector<InputInfo>& in) {
  const bool c_style = IntAttribute(node, "fmod", 0) == 1;
  return FoldInt64Binary(in, [c_style](int64_t a, int64_t b) -> std::optional<int64_t> {
    if (b == 0 || (a == INT64_MIN && b == -1)) return b == 0 ? std::nullopt : std::optional<int64_t>(0);
    const int64_t r = a % b;
    return c_style || r == 0 || (r < 0) == (b < 0) ? r : r + b;
  });
}
TASO_REGISTER_ONNX_FOLDER("Mod", FoldMod);

}  // namespace
}  // namespace taso::ops
