// ConstantOfShape: not a library operator; of an int64 constant shape with an int64 value
// (shape arithmetic: PyTorch's `expand(n, -1, -1)` makes a tensor of ones the size of its
// target) it is folded at import, up to kMaxFoldedElements elements.
#include "shape_fold.h"
#include "taso/ir/onnx_tensor.h"

namespace taso::ops {
namespace {

std::optional<TensorDataPtr> FoldConstantOfShape(const onnx::NodeProto& node, int, const std::vector<InputInfo>& in) {
  if (in.size() != 1 || !AllInt64Constants(in) || in[0].constant->shape().size() != 1) return std::nullopt;
  const Shape shape(in[0].constant->ints().begin(), in[0].constant->ints().end());
  const std::optional<int64_t> n = CheckedNumElements(shape);
  if (!n || *n > kMaxFoldedElements || std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; }))
    return std::nullopt;
  const onnx::AttributeProto* value = FindAttribute(node, "value");
  if (value == nullptr || !value->has_t()) return std::nullopt;  // float32 zeros: no shape arithmetic
  absl::StatusOr<TensorDataPtr> fill = TensorFromProto(value->t(), "");
  if (!fill.ok() || (*fill)->dtype() != DataType::kInt64 || (*fill)->numel() != 1) return std::nullopt;
  return TensorData::Int64(shape, std::vector<int64_t>(*n, (*fill)->ints()[0]));
}
TASO_REGISTER_ONNX_FOLDER("ConstantOfShape", FoldConstantOfShape);

}  // namespace
}  // namespace taso::ops
