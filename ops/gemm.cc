// Gemm: Y = alpha * A' * B' + beta * C, with A' and B' optionally transposed and C
// broadcast to [M, N]. Represented exactly (alpha, beta and the transposes are kept).
#include "taso/ir/ops/gemm.h"

#include "dense_product.h"
#include "op_util.h"
#include "taso/ir/ops/add.h"
#include "taso/ir/ops/matmul.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

class Gemm : public KernelOp<Gemm> {
 public:
  absl::string_view name() const override { return op_names::kGemm; }

  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params& p, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 2, 3));
    RETURN_IF_ERROR(ExpectFloat(in[0], "A"));
    RETURN_IF_ERROR(ExpectFloat(in[1], "B"));
    RETURN_IF_ERROR(ExpectRank(in[0], 2, "A"));
    RETURN_IF_ERROR(ExpectRank(in[1], 2, "B"));
    const bool ta = p.Int("transA", 0) != 0, tb = p.Int("transB", 0) != 0;
    const int64_t m = ta ? in[0].shape[1] : in[0].shape[0], k = ta ? in[0].shape[0] : in[0].shape[1];
    const int64_t kb = tb ? in[1].shape[1] : in[1].shape[0], n = tb ? in[1].shape[0] : in[1].shape[1];
    if (k != kb)
      return Bad(absl::StrCat("inner dimensions differ: A ", ShapeToString(in[0].shape), " B ",
                              ShapeToString(in[1].shape), " (transA=", ta, ", transB=", tb, ")"));
    if (in.size() == 3 && in[2].present) {
      RETURN_IF_ERROR(ExpectFloat(in[2], "C"));
      ASSIGN_OR_RETURN(Shape s, BroadcastShapes(in[2].shape, Shape{m, n}));
      if (s != Shape{m, n})
        return Bad(absl::StrCat("C ", ShapeToString(in[2].shape), " does not broadcast to [", m, ",", n, "]"));
    }
    return std::vector<OutputType>{{DataType::kFloat32, Shape{m, n}}};
  }

  template <typename S>
  static absl::Status Compute(const Params& p, KernelArgs<S>& args) {
    const TensorView<S>& a = *args.in[0];
    const TensorView<S>& b = *args.in[1];
    Tensor<S>& y = *args.out[0];
    const bool ta = p.Int("transA", 0) != 0, tb = p.Int("transB", 0) != 0;
    const int64_t m = y.shape[0], n = y.shape[1], k = ta ? a.shape[0] : a.shape[1];
    // A factor of 1 is no multiplication: in the integer domain 1.0 is a bit pattern,
    // not the unit, and the unscaled Gemm must fingerprint as the sum it is.
    const double alpha_value = p.Float("alpha", 1.0), beta_value = p.Float("beta", 1.0);
    const auto scale = [](double factor, S v) { return factor == 1.0 ? v : Domain<S>::FromDouble(factor) * v; };
    const std::vector<S> at = ta ? Transposed(a.data.data(), k, m) : std::vector<S>();
    const std::vector<S> bt = tb ? Transposed(b.data.data(), n, k) : std::vector<S>();
    MultiplyDenseBatches<S>(1, m, k, n, [&](int64_t) {
      return std::tuple<const S*, const S*, S*>(ta ? at.data() : a.data.data(), tb ? bt.data() : b.data.data(),
                                                y.data.data());
    });
    if (alpha_value != 1.0)
      for (S& v : y.data) v = scale(alpha_value, v);
    if (args.in.size() == 3 && args.in[2] != nullptr) {
      Tensor<S> c(y.shape);
      BroadcastBinary(*args.in[2], y, c, [&](S cv, S) { return scale(beta_value, cv); });
      for (int64_t i = 0; i < y.numel(); ++i) y.data[i] += c.data[i];
    }
    return absl::OkStatus();
  }

  OpMetrics Metrics(const Params& p, absl::Span<const InputInfo> in, absl::Span<const OutputType> out) const override {
    OpMetrics m = OpDef::Metrics(p, in, out);
    const int64_t k = p.Int("transA", 0) ? in[0].shape[0] : in[0].shape[1];
    m.flops = 2.0 * static_cast<double>(NumElements(out[0].shape)) * static_cast<double>(k);
    return m;
  }

  // Output [M, N]: M from A, N from B (its first dimension when transposed).
  DimSources DimensionSources(const Params& p, absl::Span<const InputInfo>,
                              absl::Span<const OutputType>) const override {
    const bool ta = p.Int("transA", 0) != 0, tb = p.Int("transB", 0) != 0;
    return {std::vector<DimSource>{DimSource::Copy(0, ta ? 1 : 0), DimSource::Copy(1, tb ? 0 : 1)}};
  }

  // A linear layer as exporters write it: Y = A B + C or A B^T + C, C a bias vector.
  std::vector<GeneratorVariant> GeneratorVariants() const override {
    std::vector<GeneratorVariant> out;
    for (int64_t tb : {0, 1}) {
      GeneratorVariant v;
      v.label = tb ? "t" : "n";
      v.params.Set("transB", tb);
      v.arity = 3;
      v.roles = {GenRole::kMatrix, GenRole::kMatrix, GenRole::kBias};
      v.fixed_params = {"transB"};
      out.push_back(v);
    }
    return out;
  }

  // Only the form the generator enumerates has a rule form: no scaling, A as it is and a
  // bias vector.
  std::optional<Params> RuleParams(const Params& p, absl::Span<const InputInfo> in) const override {
    if (in.size() != 3 || !in[2].present || in[2].shape.size() != 1) return std::nullopt;
    if (p.Float("alpha", 1.0) != 1.0 || p.Float("beta", 1.0) != 1.0 || p.Int("transA", 0) != 0) return std::nullopt;
    return Params().Set("transB", p.Int("transB", 0) != 0 ? int64_t{1} : int64_t{0});
  }

  absl::StatusOr<SmtForm> Smt(const Params& p, int num_inputs, int) const override {
    return SmtCall(name(), num_inputs, 3, "gemm", {{"transB", p.Int("transB", 0)}});
  }

  std::vector<std::string> onnx_op_types() const override { return {"Gemm"}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override {
    return Params()
        .Set("alpha", node.Float("alpha", 1.0))
        .Set("beta", node.Float("beta", 1.0))
        .Set("transA", node.Int("transA", 0))
        .Set("transB", node.Int("transB", 0));
  }
  absl::Status ToOnnx(const Params& p, OnnxExportNode& e) const override {
    onnx::NodeProto* n = EmitSame(e, "Gemm");
    OnnxExportNode::SetFloat(n, "alpha", p.Float("alpha", 1.0));
    OnnxExportNode::SetFloat(n, "beta", p.Float("beta", 1.0));
    OnnxExportNode::SetInt(n, "transA", p.Int("transA", 0));
    OnnxExportNode::SetInt(n, "transB", p.Int("transB", 0));
    return absl::OkStatus();
  }
};

TASO_REGISTER_OP(Gemm);

// Whether `v` is a float vector of `n` entries.
bool IsBiasVector(const Graph& g, ValueId v, int64_t n) {
  const Value& value = g.value(v);
  return value.dtype == DataType::kFloat32 && value.shape_known && value.shape == Shape{n};
}

}  // namespace

const OpDef& GemmOp() {
  static const OpDef* op = OpRegistry::Global().Find(Gemm().name());
  return *op;
}

std::optional<ProductWithBias> MatchProductWithBias(const Graph& g, const UseIndex& uses, NodeId add) {
  const Node& node = g.node(add);
  if (node.op != &AddOp() || node.inputs.size() != 2) return std::nullopt;
  for (int side : {0, 1}) {
    const ValueId product = node.inputs[side], bias = node.inputs[1 - side];
    const NodeId p = g.value(product).producer;
    if (p == kNoNode || g.node(p).op != &MatMulOp() || uses.SoleReader(product) != add) continue;
    const ValueId x = g.node(p).inputs[0], w = g.node(p).inputs[1];
    const Shape& ws = g.value(w).shape;
    if (ws.size() != 2 || !IsBiasVector(g, bias, ws[1]) || product == bias) continue;
    return ProductWithBias{p, x, w, bias};
  }
  return std::nullopt;
}

Params ProductWithBiasGemmParams() { return Params(); }

bool GemmIsProductWithBias(const Params& p, absl::Span<const InputInfo> in) {
  if (p.Float("alpha", 1.0) != 1.0 || p.Float("beta", 1.0) != 1.0 || p.Int("transA", 0) != 0) return false;
  return in.size() < 3 || !in[2].present || in[2].shape.size() == 1;
}

absl::StatusOr<ValueId> AddGemmAsProduct(Graph& g, const Params& p, absl::Span<const ValueId> inputs,
                                         const std::string& node_name, const std::string& output_name,
                                         absl::FunctionRef<std::string(absl::string_view)> fresh) {
  ValueId b = inputs[1];
  if (p.Int("transB", 0) != 0) {
    const OpDef* transpose = OpRegistry::Global().Find("Transpose");
    ASSIGN_OR_RETURN(const std::vector<ValueId> bt,
                     g.AddNode(transpose, Params().Set("perm", std::vector<int64_t>{1, 0}), {b},
                               absl::StrCat(node_name, "_transpose"), {fresh(absl::StrCat(output_name, "_weights"))}));
    b = bt[0];
  }
  const bool bias = inputs.size() == 3 && inputs[2] != kNoValue;
  ASSIGN_OR_RETURN(const std::vector<ValueId> product,
                   g.AddNode(&MatMulOp(), Params(), {inputs[0], b}, node_name,
                             {bias ? fresh(absl::StrCat(output_name, "_product")) : output_name}));
  if (!bias) return product[0];
  ASSIGN_OR_RETURN(const std::vector<ValueId> sum, g.AddNode(&AddOp(), Params(), {product[0], inputs[2]},
                                                             absl::StrCat(node_name, "_bias"), {output_name}));
  return sum[0];
}
}  // namespace taso::ops
