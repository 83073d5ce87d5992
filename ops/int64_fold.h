// Helpers for the ONNX import folding rules (taso/ir/onnx_fold.h) of int64 shape arithmetic.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "taso/ir/onnx_fold.h"

namespace taso::ops {

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

inline const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, const char* name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

inline int64_t IntAttribute(const onnx::NodeProto& node, const char* name, int64_t fallback) {
  const onnx::AttributeProto* a = FindAttribute(node, name);
  return a ? a->i() : fallback;
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

// An element-wise int64 operator on two constants of equal shapes, or one of a single
// value (all shape arithmetic needs); `fn` returns nullopt where it is undefined.
template <typename Fn>
std::optional<TensorDataPtr> FoldInt64Binary(const std::vector<InputInfo>& in, Fn fn) {
  if (in.size() != 2 || !AllInt64Constants(in)) return std::nullopt;
  const TensorData &a = *in[0].constant, &b = *in[1].constant;
  const bool a_one = a.numel() == 1, b_one = b.numel() == 1;
  Shape shape;
  if (a.shape() == b.shape())
    shape = a.shape();
  else if (a_one && b_one)
    shape = a.shape().size() >= b.shape().size() ? a.shape() : b.shape();
  else if (a_one && a.shape().size() <= b.shape().size())
    shape = b.shape();
  else if (b_one && b.shape().size() <= a.shape().size())
    shape = a.shape();
  else
    return std::nullopt;
  const int64_t n = std::max(a.numel(), b.numel());
  std::vector<int64_t> out(n);
  for (int64_t i = 0; i < n; ++i) {
    std::optional<int64_t> v = fn(a.ints()[a_one ? 0 : i], b.ints()[b_one ? 0 : i]);
    if (!v) return std::nullopt;
    out[i] = *v;
  }
  return TensorData::Int64(shape, std::move(out));
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
