// Gelu (ONNX opset 20, approximate "none"): x * 0.5 * (1 + erf(x / sqrt 2)). ONNX Runtime
// fuses the spelled-out form into one kernel; as one operator of the library, rewrites
// cannot take that form apart (moving its 0.5 into the next product's weights left ONNX
// Runtime four element-wise kernels in its place).
#include "taso/ir/ops/gelu.h"
#include "taso/ir/ops/names.h"

#include <cmath>

#include "op_util.h"

namespace taso::ops {
namespace {

struct GeluFn {
  static constexpr const char* kName = op_names::kGelu;
  static constexpr bool kInGenerator = false;
  static constexpr const char* kOnnx = "Gelu";
  static constexpr double kFlopsPerElement = 8;
  template <typename S>
  static S Apply(S x) {
    const S half = Domain<S>::FromDouble(0.5);
    return x * half * (Domain<S>::One() + Domain<S>::Erf(Domain<S>::Div(x, Domain<S>::FromDouble(std::sqrt(2.0)))));
  }
};

// ONNX has Gelu from opset 20; below it the node is written spelled out, as PyTorch
// exports it (which ONNX Runtime fuses again). The tanh approximation is another function:
// such a node stays opaque.
class Gelu : public UnaryOp<GeluFn> {
 public:
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override {
    if (node.Str("approximate", "none") != "none") return std::optional<Params>();
    return std::optional<Params>(Params());
  }
  absl::Status ToOnnx(const Params& p, OnnxExportNode& e) const override {
    if (e.opset() >= 20) return UnaryOp<GeluFn>::ToOnnx(p, e);
    auto scalar = [&](absl::string_view hint, float v) { return e.AddInitializer(hint, *TensorData::Float({}, {v})); };
    const std::string scaled = e.NewName("gelu_scaled"), erf = e.NewName("gelu_erf"), plus_one = e.NewName("gelu_1p"),
                      product = e.NewName("gelu_product");
    e.AddNode("Div", {e.input(0), scalar("gelu_sqrt2", static_cast<float>(std::sqrt(2.0)))}, {scaled});
    e.AddNode("Erf", {scaled}, {erf});
    e.AddNode("Add", {erf, scalar("gelu_one", 1.0f)}, {plus_one});
    e.AddNode("Mul", {e.input(0), plus_one}, {product});
    e.AddNode("Mul", {product, scalar("gelu_half", 0.5f)}, {e.output(0)});
    return absl::OkStatus();
  }
};

TASO_REGISTER_OP(Gelu);

// The one float of a one-element constant, if `v` is one.
std::optional<double> ScalarConstant(const Graph& g, ValueId v) {
  const TensorData* data = g.ConstantData(v);
  if (!data || data->dtype() != DataType::kFloat32 || data->numel() != 1) return std::nullopt;
  return data->floats()[0];
}

bool Near(std::optional<double> a, double b) { return a && std::fabs(*a - b) <= 1e-4 * std::fabs(b); }

// Node n is `op` reading `v` and a constant near `c` (in either order but for Div);
// where `v` is kNoValue, any operand, which `v` is then set to.
bool IsWithConstant(const Graph& g, NodeId n, absl::string_view op, double c, ValueId& v) {
  const Node& node = g.node(n);
  // A product by a one-element constant is imported as a ScalarMul.
  const bool matches = node.op->name() == op || (op == "Mul" && node.op->name() == "ScalarMul");
  if (!matches || node.inputs.size() != 2) return false;
  for (int k = 0; k < 2; ++k) {
    if (k == 1 && op == "Div") break;
    const ValueId operand = node.inputs[k], constant = node.inputs[1 - k];
    if (!Near(ScalarConstant(g, constant), c) || (v != kNoValue && operand != v)) continue;
    v = operand;
    return true;
  }
  return false;
}

}  // namespace

const OpDef& GeluOp() {
  static const OpDef* op = OpRegistry::Global().Find(GeluFn::kName);
  return *op;
}

std::optional<SpelledGelu> MatchSpelledGelu(const Graph& g, const UseIndex& uses, NodeId erf) {
  const Node& e = g.node(erf);
  if (e.op->name() != "Erf" || e.inputs.size() != 1) return std::nullopt;
  const NodeId scale = g.value(e.inputs[0]).producer;
  if (scale == kNoNode || uses.SoleReader(e.inputs[0]) != erf) return std::nullopt;
  ValueId x = kNoValue;
  if (!IsWithConstant(g, scale, "Div", std::sqrt(2.0), x) && !IsWithConstant(g, scale, "Mul", std::sqrt(0.5), x))
    return std::nullopt;
  ValueId erf_out = e.outputs[0];
  const NodeId plus_one = uses.SoleReader(erf_out);
  if (plus_one == kNoNode || !IsWithConstant(g, plus_one, "Add", 1.0, erf_out)) return std::nullopt;
  const ValueId one_plus = g.node(plus_one).outputs[0];
  const NodeId times = uses.SoleReader(one_plus);
  if (times == kNoNode || g.node(times).op->name() != "Mul" || g.node(times).inputs.size() != 2) return std::nullopt;
  const std::vector<ValueId>& factors = g.node(times).inputs;
  const ValueId other = factors[0] == one_plus ? factors[1] : factors[0];
  SpelledGelu gelu{x, kNoValue, {scale, erf, plus_one, times}};
  if (other == x) {  // x * (1 + erf) * 0.5
    ValueId product = g.node(times).outputs[0];
    const NodeId half = uses.SoleReader(product);
    if (half == kNoNode || !IsWithConstant(g, half, "Mul", 0.5, product)) return std::nullopt;
    gelu.nodes.push_back(half);
    gelu.y = g.node(half).outputs[0];
    return gelu;
  }
  // (x * 0.5) * (1 + erf)
  const NodeId half = g.value(other).producer;
  ValueId halved_input = x;
  if (half == kNoNode || uses.SoleReader(other) != times || !IsWithConstant(g, half, "Mul", 0.5, halved_input))
    return std::nullopt;
  gelu.nodes.insert(gelu.nodes.begin(), half);
  gelu.y = g.node(times).outputs[0];
  return gelu;
}

}  // namespace taso::ops
