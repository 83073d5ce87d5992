#include "onnx_static_type.h"

#include <utility>

namespace taso {

std::optional<Shape> StaticShape(const onnx::TypeProto& t) {
  if (!t.has_tensor_type() || !t.tensor_type().has_shape()) return std::nullopt;
  Shape shape;
  for (const auto& d : t.tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return std::nullopt;
    shape.push_back(d.dim_value());
  }
  return shape;
}

std::optional<OutputType> StaticType(const onnx::TypeProto& t) {
  std::optional<Shape> shape = StaticShape(t);
  if (!shape) return std::nullopt;
  OutputType out;
  out.dtype = static_cast<DataType>(t.tensor_type().elem_type());
  out.shape = *std::move(shape);
  return out;
}

}  // namespace taso
