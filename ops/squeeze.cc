// Squeeze: not a library operator; of an int64 constant (shape arithmetic) it is folded
// at import: the same values without the listed dimensions of 1 (all of them if none).
#include "shape_fold.h"

namespace taso::ops {
namespace {

std::optional<TensorDataPtr> FoldSqueeze(const onnx::NodeProto& node, int opset, const std::vector<InputInfo>& in) {
  if (in.empty() || !AllInt64Constants(in, /*first_optional=*/1)) return std::nullopt;
  std::optional<std::vector<int64_t>> axes = FoldAxes(node, opset, in);
  if (!axes) return std::nullopt;
  const TensorData& x = *in[0].constant;
  const int64_t rank = static_cast<int64_t>(x.shape().size());
  for (int64_t& a : *axes) a = a < 0 ? a + rank : a;
  Shape kept;
  for (int64_t d = 0; d < rank; ++d) {
    const bool listed = axes->empty() ? x.shape()[d] == 1 : std::count(axes->begin(), axes->end(), d) > 0;
    if (!listed)
      kept.push_back(x.shape()[d]);
    else if (x.shape()[d] != 1)
      return std::nullopt;
  }
  return TensorData::Int64(kept, std::vector<int64_t>(x.ints().begin(), x.ints().end()));
}
TASO_REGISTER_ONNX_FOLDER("Squeeze", FoldSqueeze);

}  // namespace
}  // namespace taso::ops
