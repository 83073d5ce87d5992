// MergeGroups: the kernel of a grouped convolution with `factor` times fewer groups that
// computes the same: each merged group's kernel is block-diagonal, the original groups'
// kernels on the diagonal and zeros elsewhere. Inputs: the kernel W [O, C/g, kh, kw] and
// the convolution's input X [N, C, H, W], read for its channel count C only (g = C/(C/g)).
// Output [O, factor*C/g, kh, kw]. Weight-only: folded into a constant before export.
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

struct Merge {
  int64_t groups, factor, kernels_per_group;
};

absl::StatusOr<Merge> ReadMerge(const Params& p, const Shape& w, const Shape& x) {
  if (w.size() != 4) return Bad(absl::StrCat("kernel W must have rank 4 (OIHW), got ", ShapeToString(w)));
  if (x.size() != 4) return Bad(absl::StrCat("input X must have rank 4 (NCHW), got ", ShapeToString(x)));
  const int64_t factor = p.Int("factor", 0);
  if (factor < 2) return Bad(absl::StrCat("factor must be at least 2, got ", factor));
  if (w[1] < 1 || x[1] % w[1] != 0)
    return Bad(absl::StrCat("kernel ", ShapeToString(w), " does not group input ", ShapeToString(x)));
  const int64_t groups = x[1] / w[1];
  if (groups % factor != 0 || w[0] % groups != 0)
    return Bad(absl::StrCat("cannot merge ", groups, " groups of kernel ", ShapeToString(w), " by ", factor));
  return Merge{groups, factor, w[0] / groups};
}

class MergeGroups : public KernelOp<MergeGroups> {
 public:
  absl::string_view name() const override { return op_names::kMergeGroups; }
  bool reads_only_shape_of(int input) const override { return input == 1; }

  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params& p, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 2, 2));
    RETURN_IF_ERROR(ExpectFloat(in[0], "W"));
    const Shape& w = in[0].shape;
    ASSIGN_OR_RETURN(Merge m, ReadMerge(p, w, in[1].shape));
    return std::vector<OutputType>{{DataType::kFloat32, Shape{w[0], w[1] * m.factor, w[2], w[3]}}};
  }

  // Output kernel o (of original group o / kernels_per_group) holds W's kernel o at the
  // block of input channels that group takes within its merged group.
  template <typename S>
  static absl::Status Compute(const Params& p, KernelArgs<S>& a) {
    const TensorView<S>& w = *a.in[0];
    Tensor<S>& y = *a.out[0];
    ASSIGN_OR_RETURN(Merge m, ReadMerge(p, w.shape, a.in[1]->shape));
    const int64_t in_group = w.shape[1], plane = w.shape[2] * w.shape[3];
    const int64_t block = in_group * plane;
    std::fill(y.data.begin(), y.data.end(), Domain<S>::Zero());
    for (int64_t o = 0; o < w.shape[0]; ++o) {
      const int64_t slot = (o / m.kernels_per_group) % m.factor;
      std::copy_n(w.data.begin() + o * block, block, y.data.begin() + (o * m.factor + slot) * block);
    }
    return absl::OkStatus();
  }

  DimSources DimensionSources(const Params&, absl::Span<const InputInfo>, absl::Span<const OutputType>) const override {
    return {std::vector<DimSource>{DimSource::Copy(0, 0), {}, DimSource::Copy(0, 2), DimSource::Copy(0, 3)}};
  }

  // Merges groups two at a time (the generator's grouped kernel has four groups: merging
  // four would make a dense convolution), reading a kernel and the shape of an input.
  std::vector<GeneratorVariant> GeneratorVariants() const override {
    return {GeneratorVariant{.label = "x2",
                             .params = Params().Set("factor", int64_t{2}),
                             .arity = 2,
                             .roles = {GenRole::kWeight, GenRole::kActivation},
                             .inputs_only = true,
                             .shape_only_inputs = 0b10,
                             .fixed_params = {}}};
  }

  absl::StatusOr<SmtForm> Smt(const Params& p, int num_inputs, int) const override {
    return SmtCall(name(), num_inputs, 2, "mergegroups", {{"factor", p.Int("factor", 0)}});
  }
};

TASO_REGISTER_OP(MergeGroups);

}  // namespace
}  // namespace taso::ops
