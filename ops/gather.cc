// Gather: not a library operator; along axis 0 of a 1-D int64 constant (picking a
// dimension out of a Shape) it is folded to a constant at import.
#include "shape_fold.h"

namespace taso::ops {
namespace {

std::optional<TensorDataPtr> FoldGather(const onnx::NodeProto& node, int, const std::vector<InputInfo>& in) {
  if (in.size() != 2 || !AllInt64Constants(in) || IntAttribute(node, "axis", 0) != 0) return std::nullopt;
  const TensorData &data = *in[0].constant, &indices = *in[1].constant;
  if (data.shape().size() != 1 || indices.shape().size() > 1) return std::nullopt;
  std::vector<int64_t> out;
  for (int64_t i : indices.ints()) {
    if (i < 0) i += data.numel();
    if (i < 0 || i >= data.numel()) return std::nullopt;
    out.push_back(data.ints()[i]);
  }
  return TensorData::Int64(indices.shape(), std::move(out));
}
TASO_REGISTER_ONNX_FOLDER("Gather", FoldGather);

}  // namespace
}  // namespace taso::ops
