// Shared shape of the constant-tensor operators (C_pool, I_conv, I_matmul, I_ewmul): no
// inputs, a "shape" parameter, a fill rule per domain; exported as an ONNX Constant.
#pragma once

#include "op_util.h"

namespace taso::ops {

// Impl provides: kName, CheckShape(const Shape&) -> Status, Fill<S>(Tensor<S>&).
template <typename Impl>
class ConstantTensorOp : public KernelOp<ConstantTensorOp<Impl>> {
 public:
  absl::string_view name() const override { return Impl::kName; }
  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params& p, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 0, 0));
    std::vector<int64_t> dims = p.Ints("shape");
    Shape shape(dims.begin(), dims.end());
    for (int64_t d : shape)
      if (d < 1) return Bad(absl::StrCat("shape ", ShapeToString(shape), " has a non-positive dimension"));
    RETURN_IF_ERROR(Impl::CheckShape(shape));
    return std::vector<OutputType>{{DataType::kFloat32, shape}};
  }
  template <typename S>
  static absl::Status Compute(const Params&, KernelArgs<S>& a) {
    std::fill(a.out[0]->data.begin(), a.out[0]->data.end(), Domain<S>::Zero());
    Impl::template Fill<S>(*a.out[0]);
    return absl::OkStatus();
  }
  OpMetrics Metrics(const Params& p, absl::Span<const InputInfo> in, absl::Span<const OutputType> out) const override {
    return OpMetrics{};  // a constant is computed ahead of time
  }
  absl::Status ToOnnx(const Params& p, OnnxExportNode& e) const override {
    Tensor<float> t(e.output_type(0).shape);
    Impl::template Fill<float>(t);
    onnx::NodeProto* n = e.AddNode("Constant", {}, e.outputs());
    OnnxExportNode::SetTensor(n, "value", *TensorData::Float(t.shape, std::move(t.data)));
    return absl::OkStatus();
  }
};

}  // namespace taso::ops
