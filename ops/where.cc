// Where: not a library operator; of a bool constant choosing between int64 constants
// (shape arithmetic: PyTorch's `expand(n, -1, -1)` puts 1 where its target says -1) it is
// folded at import.
#include "shape_fold.h"

namespace taso::ops {
namespace {

std::optional<TensorDataPtr> FoldWhere(const onnx::NodeProto&, int, const std::vector<InputInfo>& in) {
  if (in.size() != 3 || !Int64Constant(in[1]) || !Int64Constant(in[2])) return std::nullopt;
  const std::optional<std::vector<bool>> condition = BoolConstant(in[0]);
  if (!condition) return std::nullopt;
  const TensorData &x = *in[1].constant, &y = *in[2].constant;
  std::optional<Shape> shape = ElementwiseShape({in[0].constant->shape(), x.shape(), y.shape()});
  if (!shape) return std::nullopt;
  const int64_t n = NumElements(*shape);
  auto at = [](auto values, int64_t i) { return values[values.size() == 1 ? 0 : i]; };
  std::vector<int64_t> out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = at(*condition, i) ? at(x.ints(), i) : at(y.ints(), i);
  return TensorData::Int64(*std::move(shape), std::move(out));
}
TASO_REGISTER_ONNX_FOLDER("Where", FoldWhere);

}  // namespace
}  // namespace taso::ops
