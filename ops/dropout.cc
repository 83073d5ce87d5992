// Dropout at inference: the identity. Only the inference form is represented: a node
// that asks for its mask or may run in training mode stays opaque.
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

class Dropout : public KernelOp<Dropout> {
 public:
  absl::string_view name() const override { return op_names::kDropout; }
  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params&, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 1, 2));  // data and, from opset 12, an optional ratio
    RETURN_IF_ERROR(ExpectFloat(in[0], "data"));
    return std::vector<OutputType>{{DataType::kFloat32, in[0].shape}};
  }
  template <typename S>
  static absl::Status Compute(const Params& p, KernelArgs<S>& a) {
    return CopyFirstInput::Compute(p, a);
  }
  OpMetrics Metrics(const Params&, absl::Span<const InputInfo>, absl::Span<const OutputType>) const override {
    return OpMetrics{};
  }
  std::vector<std::string> onnx_op_types() const override { return {"Dropout"}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override {
    if (node.inputs().size() > 2) return std::nullopt;  // a training_mode input
    Params p;
    if (node.Has("ratio")) p.Set("ratio", node.Float("ratio", 0.5));  // opset 11 attribute
    if (node.Has("seed")) p.Set("seed", node.Int("seed", 0));
    return p;
  }
  absl::Status ToOnnx(const Params& p, OnnxExportNode& e) const override {
    onnx::NodeProto* n = EmitSame(e, "Dropout");
    if (p.Has("ratio")) OnnxExportNode::SetFloat(n, "ratio", p.Float("ratio"));
    if (p.Has("seed")) OnnxExportNode::SetInt(n, "seed", p.Int("seed"));
    return absl::OkStatus();
  }
};

TASO_REGISTER_OP(Dropout);

}  // namespace
}  // namespace taso::ops
