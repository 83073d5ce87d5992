// Unsqueeze: not a library operator; of an int64 constant (shape arithmetic) it is
// folded at import: the same values with dimensions of 1 inserted.
#include "int64_fold.h"

namespace taso::ops {
namespace {

std::optional<TensorDataPtr> FoldUnsqueeze(const onnx::NodeProto& node, int opset, const std::vector<InputInfo>& in) {
  if (in.empty() || !AllInt64Constants(in, /*first_optional=*/1)) return std::nullopt;
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
  return TensorData::Int64(shape, std::vector<int64_t>(x.ints().begin(), x.ints().end()));
}
TASO_REGISTER_ONNX_FOLDER("Unsqueeze", FoldUnsqueeze);

}  // namespace
}  // namespace taso::ops
