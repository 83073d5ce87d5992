// Enlarge: pads a convolution kernel [O, I, kh, kw] with zeros, centred, to a larger
// kernel size: that of a second (reference) kernel input, or the "kernel" parameter
// (TASO's enlarge). Exported as an ONNX Pad.
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

absl::StatusOr<std::vector<int64_t>> TargetKernel(const Params& p, absl::Span<const InputInfo> in) {
  if (in.size() == 2) {
    if (in[1].shape.size() != 4) return Bad("the reference kernel must have rank 4");
    return std::vector<int64_t>{in[1].shape[2], in[1].shape[3]};
  }
  auto k = p.Ints("kernel");
  if (k.size() != 2) return Bad("kernel needs 2 values");
  return k;
}

class Enlarge : public KernelOp<Enlarge> {
 public:
  absl::string_view name() const override { return op_names::kEnlarge; }

  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params& p, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 1, 2));
    RETURN_IF_ERROR(ExpectFloat(in[0], "W"));
    RETURN_IF_ERROR(ExpectRank(in[0], 4, "W"));
    ASSIGN_OR_RETURN(auto k, TargetKernel(p, in));
    const Shape& w = in[0].shape;
    for (int i = 0; i < 2; ++i)
      if (k[i] < w[2 + i] || (k[i] - w[2 + i]) % 2 != 0)
        return Bad(absl::StrCat("cannot enlarge kernel ", ShapeToString(w), " to ", k[0], "x", k[1],
                                " (needs a larger size of the same parity)"));
    if (k[0] == w[2] && k[1] == w[3]) return Bad(absl::StrCat("kernel ", ShapeToString(w), " already has that size"));
    return std::vector<OutputType>{{DataType::kFloat32, Shape{w[0], w[1], k[0], k[1]}}};
  }

  template <typename S>
  static absl::Status Compute(const Params&, KernelArgs<S>& a) {
    const TensorView<S>& x = *a.in[0];
    Tensor<S>& y = *a.out[0];
    const int64_t kh = x.shape[2], kw = x.shape[3], KH = y.shape[2], KW = y.shape[3];
    const int64_t oy = (KH - kh) / 2, ox = (KW - kw) / 2;
    std::fill(y.data.begin(), y.data.end(), Domain<S>::Zero());
    for (int64_t plane = 0; plane < x.shape[0] * x.shape[1]; ++plane)
      for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j)
          y.data[(plane * KH + i + oy) * KW + j + ox] = x.data[(plane * kh + i) * kw + j];
    return absl::OkStatus();
  }

  DimSources DimensionSources(const Params&, absl::Span<const InputInfo> in,
                              absl::Span<const OutputType>) const override {
    std::vector<DimSource> d = {DimSource::Copy(0, 0), DimSource::Copy(0, 1), {}, {}};
    if (in.size() == 2) {
      d[2] = DimSource::Copy(1, 2);
      d[3] = DimSource::Copy(1, 3);
    }
    return {d};
  }

  // Enlarges a weight to the kernel size of another weight.
  std::vector<GeneratorVariant> GeneratorVariants() const override {
    return {GeneratorVariant{
        .arity = 2, .roles = {GenRole::kWeight, GenRole::kWeight}, .inputs_only = true, .shape_only_inputs = 0b10}};
  }

  absl::Status ToOnnx(const Params&, OnnxExportNode& e) const override {
    const Shape& w = e.input_info(0).shape;
    const Shape& out = e.output_type(0).shape;
    const int64_t ph = (out[2] - w[2]) / 2, pw = (out[3] - w[3]) / 2;
    std::vector<int64_t> pads = {0, 0, ph, pw, 0, 0, ph, pw};
    std::string pads_name = e.AddInitializer(e.node_name() + "_pads", *TensorData::Int64({8}, pads));
    e.AddNode("Pad", {e.input(0), pads_name}, e.outputs());
    return absl::OkStatus();
  }
  absl::StatusOr<SmtForm> Smt(const Params&, int num_inputs, int) const override {
    return SmtCall(name(), num_inputs, 2, "enlarge");  // the kernel, the kernel whose size it takes
  }
};

TASO_REGISTER_OP(Enlarge);

}  // namespace
}  // namespace taso::ops
