// Constant: a node that produces the tensor held in its "value" parameter. Its value is
// known ahead of time, so shape inference can read it (e.g. as Reshape's shape).
#include "taso/ir/ops/constant.h"
#include "taso/ir/ops/names.h"

#include "op_util.h"

namespace taso::ops {
namespace {

constexpr const char* kName = op_names::kConstant;
constexpr absl::string_view kValue = "value";  // the parameter holding the tensor

class Constant : public KernelOp<Constant> {
 public:
  absl::string_view name() const override { return kName; }
  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params& p, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 0, 0));
    TensorDataPtr v = p.Tensor(kValue);
    if (v == nullptr) return Bad("Constant has no value");
    return std::vector<OutputType>{{v->dtype(), v->shape()}};
  }
  TensorDataPtr ConstantOutput(const Params& p) const override { return p.Tensor(kValue); }
  template <typename S>
  static absl::Status Compute(const Params& p, KernelArgs<S>& a) {
    TensorDataPtr v = p.Tensor(kValue);
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
    return ConstantParams(v);
  }
  absl::Status ToOnnx(const Params& p, OnnxExportNode& e) const override {
    OnnxExportNode::SetTensor(e.AddNode("Constant", {}, e.outputs()), "value", *p.Tensor(kValue));
    return absl::OkStatus();
  }
};

TASO_REGISTER_OP(Constant);

}  // namespace

const OpDef* ConstantOp() {
  static const OpDef* const op = OpRegistry::Global().Find(kName);
  return op;
}

Params ConstantParams(TensorDataPtr value) {
  Params p;
  p.Set(kValue, std::move(value));
  return p;
}

}  // namespace taso::ops
