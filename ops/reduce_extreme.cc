// ReduceMax and ReduceMin: not library operators; of an int64 or a small float32 constant
// (shape arithmetic: torchvision's detection transform takes the largest and smallest
// sides of an image) they are folded at import.
#include <algorithm>
#include <cmath>

#include "shape_fold.h"

namespace taso::ops {
namespace {

// The axes reduced: the attribute before opset 18, the input from it; all where none.
std::optional<std::vector<bool>> ReducedAxes(const onnx::NodeProto& node, int opset, const std::vector<InputInfo>& in,
                                             int rank) {
  std::vector<int64_t> axes;
  if (opset >= 18 && in.size() > 1 && in[1].present) {
    const TensorData* given = Int64Constant(in[1]);
    if (given == nullptr) return std::nullopt;
    axes.assign(given->ints().begin(), given->ints().end());
  } else if (const onnx::AttributeProto* a = FindAttribute(node, "axes")) {
    axes.assign(a->ints().begin(), a->ints().end());
  }
  if (axes.empty() && IntAttribute(node, "noop_with_empty_axes", 0) == 1) return std::nullopt;
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank) return std::nullopt;
    reduced[axis < 0 ? axis + rank : axis] = true;
  }
  return reduced;
}

// The largest (or, with `smallest`, the smallest) of `values` (of `shape`) over the
// reduced axes, at the result's positions with those axes as 1.
template <typename T>
std::vector<T> Extremes(const Shape& shape, absl::Span<const T> values, const std::vector<bool>& reduced,
                        bool smallest) {
  const int rank = static_cast<int>(shape.size());
  Shape kept(shape);
  for (int d = 0; d < rank; ++d)
    if (reduced[d]) kept[d] = 1;
  const Shape in_strides = RowMajorStrides(shape), out_strides = RowMajorStrides(kept);
  std::vector<std::optional<T>> extreme(NumElements(kept));
  for (size_t i = 0; i < values.size(); ++i) {
    int64_t o = 0;
    for (int d = 0; d < rank; ++d)
      if (!reduced[d]) o += (static_cast<int64_t>(i) / in_strides[d] % shape[d]) * out_strides[d];
    const T v = values[i];
    if (!extreme[o] || (smallest ? v < *extreme[o] : v > *extreme[o])) extreme[o] = v;
  }
  std::vector<T> out;
  for (const auto& v : extreme) out.push_back(*v);
  return out;
}

// Of an int64 constant, or a small float32 one without NaN.
std::optional<TensorDataPtr> FoldReduceExtreme(const onnx::NodeProto& node, int opset, const std::vector<InputInfo>& in,
                                               bool smallest) {
  const TensorData* x = in.empty() ? nullptr : Int64Constant(in[0]);
  const bool floats = x == nullptr;
  if (floats) x = in.empty() ? nullptr : SmallFloatConstant(in[0]);
  if (x == nullptr || x->numel() == 0 || x->numel() > kMaxFoldedElements) return std::nullopt;
  if (floats && std::any_of(x->floats().begin(), x->floats().end(), [](float v) { return std::isnan(v); }))
    return std::nullopt;
  const Shape& shape = x->shape();
  const int rank = static_cast<int>(shape.size());
  const std::optional<std::vector<bool>> reduced = ReducedAxes(node, opset, in, rank);
  if (!reduced) return std::nullopt;
  Shape result;
  for (int d = 0; d < rank; ++d)
    if (!(*reduced)[d])
      result.push_back(shape[d]);
    else if (IntAttribute(node, "keepdims", 1) == 1)
      result.push_back(1);
  if (floats) return TensorData::Float(std::move(result), Extremes(shape, x->floats(), *reduced, smallest));
  return TensorData::Int64(std::move(result), Extremes(shape, x->ints(), *reduced, smallest));
}

std::optional<TensorDataPtr> FoldReduceMax(const onnx::NodeProto& node, int opset, const std::vector<InputInfo>& in) {
  return FoldReduceExtreme(node, opset, in, /*smallest=*/false);
}
TASO_REGISTER_ONNX_FOLDER("ReduceMax", FoldReduceMax);

std::optional<TensorDataPtr> FoldReduceMin(const onnx::NodeProto& node, int opset, const std::vector<InputInfo>& in) {
  return FoldReduceExtreme(node, opset, in, /*smallest=*/true);
}
TASO_REGISTER_ONNX_FOLDER("ReduceMin", FoldReduceMin);

}  // namespace
}  // namespace taso::ops
