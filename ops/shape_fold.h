// Helpers for the ONNX import folding rules (taso/ir/onnx_fold.h) of shape arithmetic: on
// int64 constants, and on small float32 ones where exports compute sizes through floats.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "onnx_attributes.h"
#include "taso/ir/onnx_fold.h"
#include "taso/ir/op_semantics.h"

namespace taso::ops {

// Shape arithmetic is small; a larger tensor is left to run time.
inline constexpr int64_t kMaxFoldedElements = 4096;

inline const TensorData* Int64Constant(const InputInfo& in) {
  return in.present && in.constant && in.constant->dtype() == DataType::kInt64 ? in.constant : nullptr;
}

// Every input is an int64 constant; those from `first_optional` on may be absent (an
// omitted required input is no constant: the node is then left as it is).
inline bool AllInt64Constants(const std::vector<InputInfo>& in, size_t first_optional = SIZE_MAX) {
  for (size_t i = 0; i < in.size(); ++i)
    if (!Int64Constant(in[i]) && (in[i].present || i < first_optional)) return false;
  return !in.empty();
}

// Int64 arithmetic of folded shape values, nullopt where the exact result does not fit
// (the node is then left to run time).
inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
}
inline std::optional<int64_t> CheckedSub(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_sub_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
}
inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
}
// Truncates, as ONNX's integer Div; nullopt on division by zero or INT64_MIN / -1.
inline std::optional<int64_t> CheckedDiv(int64_t a, int64_t b) {
  if (b == 0 || (a == INT64_MIN && b == -1)) return std::nullopt;
  return a / b;
}

// The shape of an element-wise result in shape arithmetic: the inputs of more than one
// value all of one shape, the single values of no higher rank; nullopt for any other
// broadcast (shape arithmetic needs none).
inline std::optional<Shape> ElementwiseShape(const std::vector<Shape>& shapes) {
  std::optional<Shape> many;
  size_t rank = 0;
  for (const Shape& s : shapes) {
    rank = std::max(rank, s.size());
    if (NumElements(s) == 1) continue;
    if (many && *many != s) return std::nullopt;
    many = s;
  }
  if (many) return many->size() == rank ? many : std::nullopt;
  for (const Shape& s : shapes)
    if (s.size() == rank) return s;
  return std::nullopt;  // no shapes
}

// An element-wise int64 operator on two constants (ElementwiseShape), its values as
// int64; `fn` returns nullopt where it is undefined.
template <typename Fn>
std::optional<std::pair<Shape, std::vector<int64_t>>> Int64Elementwise(const std::vector<InputInfo>& in, Fn fn) {
  if (in.size() != 2 || !AllInt64Constants(in)) return std::nullopt;
  const TensorData &a = *in[0].constant, &b = *in[1].constant;
  std::optional<Shape> shape = ElementwiseShape({a.shape(), b.shape()});
  if (!shape) return std::nullopt;
  const bool a_one = a.numel() == 1, b_one = b.numel() == 1;
  const int64_t n = NumElements(*shape);
  std::vector<int64_t> out(n);
  for (int64_t i = 0; i < n; ++i) {
    std::optional<int64_t> v = fn(a.ints()[a_one ? 0 : i], b.ints()[b_one ? 0 : i]);
    if (!v) return std::nullopt;
    out[i] = *v;
  }
  return std::make_pair(*std::move(shape), std::move(out));
}

template <typename Fn>
std::optional<TensorDataPtr> FoldInt64Binary(const std::vector<InputInfo>& in, Fn fn) {
  auto result = Int64Elementwise(in, fn);
  if (!result) return std::nullopt;
  return TensorData::Int64(std::move(result->first), std::move(result->second));
}

// A small float32 constant: shape arithmetic through floats (torchvision's detection
// transform pads an image to a multiple of 32 by ceil(float(size) / 32) * 32).
inline const TensorData* SmallFloatConstant(const InputInfo& in) {
  return in.present && in.constant && in.constant->dtype() == DataType::kFloat32 &&
                 in.constant->numel() <= kMaxFoldedElements
             ? in.constant
             : nullptr;
}

// An element-wise float32 operator on two small constants (ElementwiseShape).
template <typename Fn>
std::optional<TensorDataPtr> FoldSmallFloatBinary(const std::vector<InputInfo>& in, Fn fn) {
  if (in.size() != 2 || !SmallFloatConstant(in[0]) || !SmallFloatConstant(in[1])) return std::nullopt;
  const TensorData &a = *in[0].constant, &b = *in[1].constant;
  std::optional<Shape> shape = ElementwiseShape({a.shape(), b.shape()});
  if (!shape) return std::nullopt;
  const bool a_one = a.numel() == 1, b_one = b.numel() == 1;
  std::vector<float> out(NumElements(*shape));
  for (size_t i = 0; i < out.size(); ++i) out[i] = fn(a.floats()[a_one ? 0 : i], b.floats()[b_one ? 0 : i]);
  return TensorData::Float(*std::move(shape), std::move(out));
}

// A bool tensor of shape arithmetic (a comparison), kept as its ONNX TensorProto.
inline TensorDataPtr BoolTensor(Shape shape, const std::vector<bool>& values) {
  onnx::TensorProto proto;
  proto.set_data_type(onnx::TensorProto::BOOL);
  for (int64_t d : shape) proto.add_dims(d);
  std::string bytes(values.size(), '\0');
  for (size_t i = 0; i < values.size(); ++i) bytes[i] = values[i] ? 1 : 0;
  proto.set_raw_data(std::move(bytes));
  return TensorData::Raw(DataType::kBool, std::move(shape), proto.SerializeAsString());
}

// A bool constant's values, nullopt where the input is none (or its data is elsewhere).
inline std::optional<std::vector<bool>> BoolConstant(const InputInfo& in) {
  if (!in.present || !in.constant || in.constant->dtype() != DataType::kBool) return std::nullopt;
  onnx::TensorProto proto;
  if (!proto.ParseFromString(in.constant->raw_proto())) return std::nullopt;
  const size_t n = static_cast<size_t>(in.constant->numel());
  std::vector<bool> values(n);
  if (proto.has_raw_data() && proto.raw_data().size() == n) {
    for (size_t i = 0; i < n; ++i) values[i] = proto.raw_data()[i] != 0;
  } else if (!proto.has_raw_data() && static_cast<size_t>(proto.int32_data_size()) == n) {
    for (size_t i = 0; i < n; ++i) values[i] = proto.int32_data(static_cast<int>(i)) != 0;
  } else {
    return std::nullopt;
  }
  return values;
}

// A library operator that only moves data (Slice, Transpose) on an int64 constant (its
// first input), by its own reference kernel over int64: the output's shape as the operator
// infers it for float data of that shape, the other inputs as they are. Nullopt where it
// does not apply or the kernel fails.
template <typename Op>
std::optional<TensorDataPtr> MoveInt64ByKernel(const Op& op, const Params& params, const std::vector<InputInfo>& in) {
  if (in.empty() || !Int64Constant(in[0]) || in[0].constant->numel() > kMaxFoldedElements) return std::nullopt;
  const TensorData& data = *in[0].constant;
  std::vector<InputInfo> as_float = in;
  as_float[0] = InputInfo{.dtype = DataType::kFloat32, .shape = data.shape()};
  absl::StatusOr<std::vector<OutputType>> types = op.InferTypes(params, as_float);
  if (!types.ok() || types->size() != 1) return std::nullopt;
  Tensor<int64_t> x(data.shape(), std::vector<int64_t>(data.ints().begin(), data.ints().end()));
  Tensor<int64_t> y((*types)[0].shape);
  KernelArgs<int64_t> args{{&x}, {nullptr}, {&y}};
  for (size_t i = 1; i < in.size(); ++i) {
    args.in.push_back(nullptr);
    args.constant.push_back(in[i].present ? in[i].constant : nullptr);
  }
  if (!Op::Compute(params, args).ok()) return std::nullopt;
  return TensorData::Int64(std::move(y.shape), std::move(y.data));
}

// Axes of Unsqueeze or Squeeze: an input from opset 13, an attribute before.
inline std::optional<std::vector<int64_t>> FoldAxes(const onnx::NodeProto& node, int opset,
                                                    const std::vector<InputInfo>& in) {
  if (opset >= 13) {
    if (in.size() < 2) return std::vector<int64_t>{};
    const TensorData* axes = Int64Constant(in[1]);
    if (!axes) return std::nullopt;
    return std::vector<int64_t>(axes->ints().begin(), axes->ints().end());
  }
  const onnx::AttributeProto* a = FindAttribute(node, "axes");
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
}

}  // namespace taso::ops
