// BatchNormalization (inference): y = (x - mean) / sqrt(var + epsilon) * scale + bias,
// per channel (dimension 1).
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

class BatchNorm : public KernelOp<BatchNorm> {
 public:
  absl::string_view name() const override { return op_names::kBatchNormalization; }

  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params&, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 5, 5));
    RETURN_IF_ERROR(ExpectFloat(in[0], "X"));
    if (in[0].shape.size() < 2)
      return Bad(absl::StrCat("input X must have rank 2 or more, got ", ShapeToString(in[0].shape)));
    const int64_t c = in[0].shape[1];
    static const char* kNames[] = {"X", "scale", "B", "mean", "var"};
    for (int i = 1; i < 5; ++i) {
      RETURN_IF_ERROR(ExpectFloat(in[i], kNames[i]));
      if (in[i].shape != Shape{c})
        return Bad(absl::StrCat(kNames[i], " must have shape [", c, "], got ", ShapeToString(in[i].shape)));
    }
    return std::vector<OutputType>{{DataType::kFloat32, in[0].shape}};
  }

  template <typename S>
  static absl::Status Compute(const Params& p, KernelArgs<S>& a) {
    const TensorView<S>& x = *a.in[0];
    const int64_t n = x.shape[0], c = x.shape[1], inner = x.numel() / std::max<int64_t>(1, n * c);
    const S eps = Domain<S>::FromDouble(p.Float("epsilon", 1e-5));
    for (int64_t ch = 0; ch < c; ++ch) {
      const S mul = Domain<S>::Div(a.in[1]->data[ch], Domain<S>::Sqrt(a.in[4]->data[ch] + eps));
      const S add = a.in[2]->data[ch] - a.in[3]->data[ch] * mul;
      for (int64_t b = 0; b < n; ++b) {
        const S* src = x.data.data() + (b * c + ch) * inner;
        S* dst = a.out[0]->data.data() + (b * c + ch) * inner;
        for (int64_t i = 0; i < inner; ++i) dst[i] = src[i] * mul + add;
      }
    }
    return absl::OkStatus();
  }

  // With constant statistics: scale / sqrt(var + epsilon) and the shift that goes with it.
  std::optional<ChannelAffine> AsChannelAffine(const Params& p, absl::Span<const InputInfo> in,
                                               size_t data) const override {
    if (data != 0) return std::nullopt;
    const TensorData* stats[4];
    for (int i = 0; i < 4; ++i) {
      stats[i] = in[i + 1].constant;
      if (!stats[i] || stats[i]->dtype() != DataType::kFloat32) return std::nullopt;
    }
    const double eps = p.Float("epsilon", 1e-5);
    const int64_t channels = stats[0]->numel();
    ChannelAffine m{std::vector<float>(channels), std::vector<float>(channels)};
    for (int64_t k = 0; k < channels; ++k) {
      const double s = stats[0]->floats()[k] / std::sqrt(stats[3]->floats()[k] + eps);
      m.scale[k] = static_cast<float>(s);
      m.shift[k] = static_cast<float>(stats[1]->floats()[k] - stats[2]->floats()[k] * s);
    }
    return m;
  }

  OpMetrics Metrics(const Params& p, absl::Span<const InputInfo> in, absl::Span<const OutputType> out) const override {
    OpMetrics m = OpDef::Metrics(p, in, out);
    m.flops *= 2;
    return m;
  }

  std::vector<std::string> onnx_op_types() const override { return {"BatchNormalization"}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override {
    if (node.Int("training_mode", 0) != 0) return std::nullopt;
    node.Float("momentum", 0.9);  // only matters for training
    return Params().Set("epsilon", node.Float("epsilon", 1e-5));
  }
  absl::Status ToOnnx(const Params& p, OnnxExportNode& e) const override {
    OnnxExportNode::SetFloat(EmitSame(e, "BatchNormalization"), "epsilon", p.Float("epsilon", 1e-5));
    return absl::OkStatus();
  }
};

TASO_REGISTER_OP(BatchNorm);

}  // namespace
}  // namespace taso::ops
