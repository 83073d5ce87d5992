// Shared shape of the constant-tensor operators (C_pool, I_conv, I_matmul, I_ewmul). Their
// shape comes from an optional shape-source input (only its shape is read, so a rule
// states no concrete sizes), or else from the "shape" parameter. Exported as an ONNX
// Constant.
#pragma once

#include "op_util.h"

namespace taso::ops {

// The "kernel" parameter of C_pool and I_conv: [kh, kw], 3x3 when absent.
inline absl::StatusOr<std::vector<int64_t>> KernelParam(const Params& p) {
  auto k = p.Ints("kernel", {3, 3});
  if (k.size() != 2 || k[0] < 1 || k[1] < 1) return Bad("kernel needs 2 positive values");
  return k;
}

// Impl provides: kName; FromSource(params, source shape) -> StatusOr<Shape>;
// CheckShape(shape) -> Status; Sources(source rank) -> the output's DimSources;
// Fill<S>(Tensor<S>&) on a zeroed tensor; optionally kSmt, its function in the verifier's
// signature (applied to the kernel size first when kSmtTakesKernel), then the source.
template <typename Impl>
class ConstantTensorOp : public KernelOp<ConstantTensorOp<Impl>> {
 public:
  absl::string_view name() const override { return Impl::kName; }
  bool reads_only_shapes() const override { return true; }
  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params& p, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 0, 1));
    Shape shape;
    if (in.size() == 1) {
      ASSIGN_OR_RETURN(shape, Impl::FromSource(p, in[0].shape));
    } else {
      std::vector<int64_t> dims = p.Ints("shape");
      shape.assign(dims.begin(), dims.end());
    }
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
  DimSources DimensionSources(const Params&, absl::Span<const InputInfo> in,
                              absl::Span<const OutputType> out) const override {
    if (in.size() == 1) return {Impl::Sources(static_cast<int>(in[0].shape.size()))};
    return {std::vector<DimSource>(out[0].shape.size())};
  }
  OpMetrics Metrics(const Params&, absl::Span<const InputInfo>, absl::Span<const OutputType>) const override {
    return OpMetrics{};  // a constant is computed ahead of time
  }
  std::vector<GeneratorVariant> GeneratorVariants() const override {
    GeneratorVariant v = Impl::Generated();
    v.constant_output = true;
    v.shape_only_inputs = 0b1;
    return {v};
  }
  absl::Status ToOnnx(const Params&, OnnxExportNode& e) const override {
    Tensor<float> t(e.output_type(0).shape);
    Impl::template Fill<float>(t);
    onnx::NodeProto* n = e.AddNode("Constant", {}, e.outputs());
    OnnxExportNode::SetTensor(n, "value", *TensorData::Float(t.shape, std::move(t.data)));
    return absl::OkStatus();
  }
  absl::StatusOr<SmtForm> Smt(const Params& p, int num_inputs, int num_outputs) const override {
    if constexpr (requires { Impl::kSmt; }) {
      std::vector<std::pair<std::string, ParamValue>> params;
      if constexpr (requires { Impl::kSmtTakesKernel; }) {
        ASSIGN_OR_RETURN(auto k, KernelParam(p));
        params.push_back({"kernel", k});
      }
      return SmtCall(Impl::kName, num_inputs, 1, Impl::kSmt, std::move(params));
    } else {
      return OpDef::Smt(p, num_inputs, num_outputs);
    }
  }
};

}  // namespace taso::ops
