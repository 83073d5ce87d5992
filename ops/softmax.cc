// Softmax along one axis (opset 13 semantics). A Softmax from an older opset is taken
// only where both definitions agree (the last axis); otherwise it stays opaque.
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

class Softmax : public KernelOp<Softmax> {
 public:
  absl::string_view name() const override { return op_names::kSoftmax; }
  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params& p, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 1, 1));
    RETURN_IF_ERROR(ExpectFloat(in[0], "input"));
    RETURN_IF_ERROR(NormalizeAxis(p.Int("axis", -1), static_cast<int>(in[0].shape.size())).status());
    return std::vector<OutputType>{{DataType::kFloat32, in[0].shape}};
  }
  std::optional<Params> AtRowRank(const Params& p, absl::Span<const InputInfo> in, const std::vector<bool>& rows,
                                  int to_rank) const override {
    return LastAxisAtRowRank(p, in, rows, "axis", -1, to_rank);
  }

  template <typename S>
  static absl::Status Compute(const Params& p, KernelArgs<S>& a) {
    const TensorView<S>& x = *a.in[0];
    Tensor<S>& y = *a.out[0];
    ASSIGN_OR_RETURN(int axis, NormalizeAxis(p.Int("axis", -1), x.rank()));
    const auto [outer, inner] = DimensionsAround(x.shape, axis);
    const int64_t len = x.shape[axis];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * len * inner + i;
        S mx = x.data[base];
        for (int64_t j = 1; j < len; ++j) mx = Domain<S>::Max(mx, x.data[base + j * inner]);
        S sum = Domain<S>::Zero();
        for (int64_t j = 0; j < len; ++j) {
          const S e = Domain<S>::Exp(x.data[base + j * inner] - mx);
          y.data[base + j * inner] = e;
          sum += e;
        }
        for (int64_t j = 0; j < len; ++j) y.data[base + j * inner] = Domain<S>::Div(y.data[base + j * inner], sum);
      }
    return absl::OkStatus();
  }
  OpMetrics Metrics(const Params& p, absl::Span<const InputInfo> in, absl::Span<const OutputType> out) const override {
    OpMetrics m = OpDef::Metrics(p, in, out);
    m.flops *= 5;
    return m;
  }
  std::vector<std::string> onnx_op_types() const override { return {"Softmax"}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override {
    if (node.inputs().empty() || !node.inputs()[0].present) return absl::InvalidArgumentError("Softmax needs an input");
    const int rank = static_cast<int>(node.inputs()[0].shape.size());
    const int64_t axis = node.Int("axis", node.opset() >= 13 ? -1 : 1);
    auto norm = NormalizeAxis(axis, rank);
    if (!norm.ok()) return norm.status();
    if (node.opset() < 13 && *norm != rank - 1) return std::nullopt;  // opsets below 13 coerce to 2-D
    return Params().Set("axis", axis);
  }
  absl::Status ToOnnx(const Params& p, OnnxExportNode& e) const override {
    OnnxExportNode::SetInt(EmitSame(e, "Softmax"), "axis", p.Int("axis", -1));
    return absl::OkStatus();
  }
};

TASO_REGISTER_OP(Softmax);

}  // namespace
}  // namespace taso::ops
