// Constant: a node that produces the tensor held in its "value" parameter. Its value is
// known ahead of time, so shape inference can read it (e.g. as Reshape's shape).
#include "op_util.h"

namespace taso::ops {
namespace {

class Constant : public KernelOp<Constant> {
 public:
  absl::string_view name() const override { return "Constant"; }
  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params& p, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 0, 0));
    TensorDataPtr v = p.Tensor("value");
    if (v == nullptr) return Bad("Constant has no value");
    return std::vector<OutputType>{{v->dtype(), v->shape()}};
  }
  const TensorData* ConstantOutput(const Params& p) const override { return p.Tensor("value").get(); }
  template <typename S>
  static absl::Status Compute(const Params& p, KernelArgs<S>& a) {
    TensorDataPtr v = p.Tensor("value");
    if (v->dtype() != DataType::kFloat32) return absl::OkStatus();  // read through KernelArgs::constant
    if constexpr (std::is_same_v<S, float>) {
      a.out[0]->data.assign(v->floats().begin(), v->floats().end());
    } else {
      for (size_t i = 0; i < v->floats().size(); ++i) a.out[0]->data[i] = Domain<S>::FromDouble(v->floats()[i]);
    }
    return absl::OkStatus();
  }
  OpMetrics Metrics(const Params&, absl::Span<const InputInfo>, absl::Span<const OutputType>) const override {
    return OpMetrics{};
  }
  std::vector<std::string> onnx_op_types() const override { return {"Constant"}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override {
    TensorDataPtr v = node.Tensor("value");
    if (v == nullptr) return std::nullopt;  // value_float, value_ints, sparse_value, ...: opaque
    return Params().Set("value", v);
  }
  absl::Status ToOnnx(const Params& p, OnnxExportNode& e) const override {
    OnnxExportNode::SetTensor(e.AddNode("Constant", {}, e.outputs()), "value", *p.Tensor("value"));
    return absl::OkStatus();
  }
};

TASO_REGISTER_OP(Constant);

}  // namespace
}  // namespace taso::ops
