#include "shape_arithmetic.h"

#include <algorithm>

namespace taso {
namespace {

const onnx::AttributeProto* Attribute(const onnx::NodeProto& node, const char* name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t IntAttribute(const onnx::NodeProto& node, const char* name, int64_t fallback) {
  const onnx::AttributeProto* a = Attribute(node, name);
  return a ? a->i() : fallback;
}

const TensorData* Int64Constant(const InputInfo& in) {
  return in.present && in.constant && in.constant->dtype() == DataType::kInt64 ? in.constant : nullptr;
}

// Element-wise on int64 with ONNX broadcasting restricted to equal shapes or a single
// value (all shape arithmetic needs).
std::optional<TensorDataPtr> Binary(const TensorData& a, const TensorData& b, const std::string& op) {
  const bool a_one = a.numel() == 1, b_one = b.numel() == 1;
  Shape shape;
  if (a.shape() == b.shape()) shape = a.shape();
  else if (a_one && b_one) shape = a.shape().size() >= b.shape().size() ? a.shape() : b.shape();
  else if (a_one && a.shape().size() <= b.shape().size()) shape = b.shape();
  else if (b_one && b.shape().size() <= a.shape().size()) shape = a.shape();
  else return std::nullopt;
  const int64_t n = std::max(a.numel(), b.numel());
  std::vector<int64_t> out(n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t x = a.ints()[a_one ? 0 : i], y = b.ints()[b_one ? 0 : i];
    if (op == "Add") out[i] = x + y;
    else if (op == "Sub") out[i] = x - y;
    else if (op == "Mul") out[i] = x * y;
    else if (y == 0) return std::nullopt;  // Div by zero: leave it to run time
    else out[i] = x / y;                   // integer division truncates, as ONNX's
  }
  return TensorData::Int64(shape, std::move(out));
}

std::vector<int64_t> Axes(const onnx::NodeProto& node, int opset, const std::vector<InputInfo>& in, bool* ok) {
  *ok = true;
  if (opset >= 13) {
    if (in.size() < 2) return {};
    const TensorData* axes = Int64Constant(in[1]);
    if (!axes) *ok = false;
    return axes ? std::vector<int64_t>(axes->ints().begin(), axes->ints().end()) : std::vector<int64_t>{};
  }
  const onnx::AttributeProto* a = Attribute(node, "axes");
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
}

}  // namespace

std::optional<TensorDataPtr> FoldShapeArithmetic(const onnx::NodeProto& node, int opset,
                                                 const std::vector<InputInfo>& in) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return std::nullopt;
  if (node.output_size() != 1 || in.empty()) return std::nullopt;
  const std::string& op = node.op_type();
  if (op == "Shape") {
    if (!in[0].present || !in[0].shape_known) return std::nullopt;
    const int64_t rank = static_cast<int64_t>(in[0].shape.size());
    auto clamp = [rank](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t{0}, rank); };
    const int64_t start = clamp(IntAttribute(node, "start", 0)), end = clamp(IntAttribute(node, "end", rank));
    std::vector<int64_t> dims(in[0].shape.begin() + start, in[0].shape.begin() + std::max(start, end));
    const int64_t n = static_cast<int64_t>(dims.size());
    return TensorData::Int64(Shape{n}, std::move(dims));
  }
  for (const InputInfo& i : in)
    if (i.present && !Int64Constant(i)) return std::nullopt;
  const TensorData& x = *in[0].constant;
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    if (in.size() != 2) return std::nullopt;
    return Binary(x, *in[1].constant, op);
  }
  if (op == "Gather") {
    if (in.size() != 2 || x.shape().size() != 1 || IntAttribute(node, "axis", 0) != 0) return std::nullopt;
    const TensorData& idx = *in[1].constant;
    if (idx.shape().size() > 1) return std::nullopt;
    std::vector<int64_t> out;
    for (int64_t i : idx.ints()) {
      if (i < 0) i += x.numel();
      if (i < 0 || i >= x.numel()) return std::nullopt;
      out.push_back(x.ints()[i]);
    }
    return TensorData::Int64(idx.shape(), std::move(out));
  }
  if (op == "Cast") {
    if (IntAttribute(node, "to", 0) != onnx::TensorProto::INT64) return std::nullopt;
    return TensorData::Int64(x.shape(), std::vector<int64_t>(x.ints().begin(), x.ints().end()));
  }
  if (op == "Concat") {
    std::vector<int64_t> out;
    for (const InputInfo& i : in) {
      if (i.constant->shape().size() != 1) return std::nullopt;
      out.insert(out.end(), i.constant->ints().begin(), i.constant->ints().end());
    }
    const int64_t n = static_cast<int64_t>(out.size());
    return TensorData::Int64(Shape{n}, std::move(out));
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    bool ok = false;
    std::vector<int64_t> axes = Axes(node, opset, in, &ok);
    if (!ok) return std::nullopt;
    Shape shape = x.shape();
    if (op == "Unsqueeze") {
      const int64_t rank = static_cast<int64_t>(shape.size() + axes.size());
      for (int64_t& a : axes) a = a < 0 ? a + rank : a;
      std::sort(axes.begin(), axes.end());
      for (int64_t a : axes) {
        if (a < 0 || a > static_cast<int64_t>(shape.size())) return std::nullopt;
        shape.insert(shape.begin() + a, 1);
      }
    } else {
      Shape kept;
      for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
        const bool listed = axes.empty() ? shape[d] == 1
                                         : std::find_if(axes.begin(), axes.end(), [&](int64_t a) {
                                             return (a < 0 ? a + static_cast<int64_t>(shape.size()) : a) == d;
                                           }) != axes.end();
        if (!listed) kept.push_back(shape[d]);
        else if (shape[d] != 1) return std::nullopt;
      }
      shape = kept;
    }
    return TensorData::Int64(shape, std::vector<int64_t>(x.ints().begin(), x.ints().end()));
  }
  return std::nullopt;
}

}  // namespace taso
