// LayerNormalization (ONNX opset 17): each slice over the dimensions from `axis` on is
// normalized to mean 0 and variance 1, then scaled and shifted. Only the output Y is
// represented; a node that also asks for Mean or InvStdDev stays opaque. Before opset 17
// it is ONNX Runtime's operator of that name in ONNX's domain (the same computation, which
// its optimizer writes at any opset; runtime_schemas.cc), and is written back so.
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

class LayerNormalization : public KernelOp<LayerNormalization> {
 public:
  absl::string_view name() const override { return op_names::kLayerNormalization; }

  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params& p, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 2, 3));
    RETURN_IF_ERROR(ExpectFloat(in[0], "X"));
    if (in[0].shape.empty()) return Bad("input X must have rank 1 or more");
    ASSIGN_OR_RETURN(Rows rows, RowsFrom(in[0].shape, p.Int("axis", -1)));
    const char* names[] = {"X", "Scale", "B"};
    for (size_t i = 1; i < in.size(); ++i) {
      if (!in[i].present) continue;
      RETURN_IF_ERROR(ExpectFloat(in[i], names[i]));
      // ONNX lets Scale and B broadcast; the library takes them at the slice's shape.
      if (in[i].shape != rows.row)
        return Bad(absl::StrCat(names[i], " must have the normalized slice's shape ", ShapeToString(rows.row), ", got ",
                                ShapeToString(in[i].shape)));
    }
    if (p.Float("epsilon", 1e-5) <= 0) return Bad("epsilon must be positive");
    return std::vector<OutputType>{{DataType::kFloat32, in[0].shape}};
  }

  std::optional<Params> AtRowRank(const Params& p, absl::Span<const InputInfo> in, const std::vector<bool>& rows,
                                  int to_rank) const override {
    for (size_t i = 1; i < rows.size(); ++i)
      if (rows[i]) return std::nullopt;
    return LastAxisAtRowRank(p, in, rows, "axis", -1, to_rank);
  }

  template <typename S>
  static absl::Status Compute(const Params& p, KernelArgs<S>& a) {
    const TensorView<S>& x = *a.in[0];
    const TensorView<S>& scale = *a.in[1];
    const TensorView<S>* bias = a.in.size() > 2 ? a.in[2].get() : nullptr;
    ASSIGN_OR_RETURN(Rows rows, RowsFrom(x.shape, p.Int("axis", -1)));
    const S eps = Domain<S>::FromDouble(p.Float("epsilon", 1e-5));
    const S inverse_width = Domain<S>::InverseCount(rows.width);
    for (int64_t r = 0; r < rows.count; ++r) {
      const S* src = x.data.data() + r * rows.width;
      S* dst = a.out[0]->data.data() + r * rows.width;
      S sum = Domain<S>::Zero();
      for (int64_t i = 0; i < rows.width; ++i) sum += src[i];
      const S mean = sum * inverse_width;
      S squares = Domain<S>::Zero();
      for (int64_t i = 0; i < rows.width; ++i) squares += (src[i] - mean) * (src[i] - mean);
      const S std_dev = Domain<S>::Sqrt(squares * inverse_width + eps);
      for (int64_t i = 0; i < rows.width; ++i) {
        dst[i] = Domain<S>::Div(src[i] - mean, std_dev) * scale.data[i];
        if (bias) dst[i] += bias->data[i];
      }
    }
    return absl::OkStatus();
  }

  OpMetrics Metrics(const Params& p, absl::Span<const InputInfo> in, absl::Span<const OutputType> out) const override {
    OpMetrics m = OpDef::Metrics(p, in, out);
    m.flops *= 8;
    return m;
  }

  std::vector<std::string> onnx_op_types() const override { return {"LayerNormalization"}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override {
    if (node.num_outputs() > 1) return std::nullopt;          // Mean or InvStdDev wanted
    if (node.Int("stash_type", 1) != 1) return std::nullopt;  // statistics in another type
    for (const InputInfo& in : node.inputs())                 // ONNX Runtime's mixed precision before opset 17
      if (in.present && in.dtype != DataType::kFloat32) return std::nullopt;
    return Params().Set("axis", node.Int("axis", -1)).Set("epsilon", node.Float("epsilon", 1e-5));
  }
  absl::Status ToOnnx(const Params& p, OnnxExportNode& e) const override {
    onnx::NodeProto* n = EmitSame(e, "LayerNormalization");
    OnnxExportNode::SetInt(n, "axis", p.Int("axis", -1));
    OnnxExportNode::SetFloat(n, "epsilon", p.Float("epsilon", 1e-5));
    return absl::OkStatus();
  }
};

TASO_REGISTER_OP(LayerNormalization);

}  // namespace
}  // namespace taso::ops
