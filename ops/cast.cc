// Cast: not a library operator; an int64 constant cast to int64 (as exports do around
// shape arithmetic) is folded at import.
#include "int64_fold.h"

namespace taso::ops {
namespace {

std::optional<TensorDataPtr> FoldCast(const onnx::NodeProto& node, int, const std::vector<InputInfo>& in) {
  if (in.size() != 1 || !AllInt64Constants(in) || IntAttribute(node, "to", 0) != onnx::TensorProto::INT64)
    return std::nullopt;
  const TensorData& x = *in[0].constant;
  return TensorData::Int64(x.shape(), std::vector<int64_t>(x.ints().begin(), x.ints().end()));
}
TASO_REGISTER_ONNX_FOLDER("Cast", FoldCast);

}  // namespace
}  // namespace taso::ops
