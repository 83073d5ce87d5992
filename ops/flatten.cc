// Flatten: [d0..dn] -> [d0*..*d(axis-1), d(axis)*..*dn].
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

class Flatten : public KernelOp<Flatten> {
 public:
  absl::string_view name() const override { return op_names::kFlatten; }
  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params& p, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 1, 1));
    RETURN_IF_ERROR(ExpectFloat(in[0], "input"));
    const int rank = static_cast<int>(in[0].shape.size());
    int64_t axis = p.Int("axis", 1);
    if (axis < -rank || axis > rank) return Bad(absl::StrCat("axis ", axis, " is out of range for rank ", rank));
    if (axis < 0) axis += rank;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < rank; ++d) (d < axis ? outer : inner) *= in[0].shape[d];
    return std::vector<OutputType>{{DataType::kFloat32, Shape{outer, inner}}};
  }
  template <typename S>
  static absl::Status Compute(const Params& p, KernelArgs<S>& a) {
    return CopyFirstInput::Compute(p, a);
  }
  OpMetrics Metrics(const Params&, absl::Span<const InputInfo>, absl::Span<const OutputType>) const override {
    return OpMetrics{};
  }
  std::vector<std::string> onnx_op_types() const override { return {"Flatten"}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override {
    return Params().Set("axis", node.Int("axis", 1));
  }
  absl::Status ToOnnx(const Params& p, OnnxExportNode& e) const override {
    OnnxExportNode::SetInt(EmitSame(e, "Flatten"), "axis", p.Int("axis", 1));
    return absl::OkStatus();
  }
};

TASO_REGISTER_OP(Flatten);

}  // namespace
}  // namespace taso::ops
