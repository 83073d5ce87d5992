// BlockDiag: two matrices on the diagonal of one, zeros elsewhere: B [k1, n1] and
// D [k2, n2] give [[B, 0], [0, D]] of [k1 + k2, n1 + n2]. The weight of two linear layers
// on different inputs merged into one product of the concatenated inputs (task heads);
// on weights it is folded into a constant before export.
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

class BlockDiag : public KernelOp<BlockDiag> {
 public:
  absl::string_view name() const override { return op_names::kBlockDiag; }

  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params&, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 2, 2));
    RETURN_IF_ERROR(ExpectFloat(in[0], "B"));
    RETURN_IF_ERROR(ExpectFloat(in[1], "D"));
    const Shape &b = in[0].shape, &d = in[1].shape;
    if (b.size() != 2 || d.size() != 2)
      return Bad(absl::StrCat("expects two matrices, got ", ShapeToString(b), " and ", ShapeToString(d)));
    return std::vector<OutputType>{{DataType::kFloat32, Shape{b[0] + d[0], b[1] + d[1]}}};
  }

  template <typename S>
  static absl::Status Compute(const Params&, KernelArgs<S>& a) {
    const TensorView<S>& b = *a.in[0];
    const TensorView<S>& d = *a.in[1];
    Tensor<S>& y = *a.out[0];
    const int64_t cols = y.shape[1], b_cols = b.shape[1], d_cols = d.shape[1];
    std::fill(y.data.begin(), y.data.end(), Domain<S>::Zero());
    for (int64_t r = 0; r < b.shape[0]; ++r)
      std::copy_n(b.data.begin() + r * b_cols, b_cols, y.data.begin() + r * cols);
    for (int64_t r = 0; r < d.shape[0]; ++r)
      std::copy_n(d.data.begin() + r * d_cols, d_cols, y.data.begin() + (b.shape[0] + r) * cols + b_cols);
    return absl::OkStatus();
  }

  OpMetrics Metrics(const Params& p, absl::Span<const InputInfo> in, absl::Span<const OutputType> out) const override {
    return MovesDataOnly(OpDef::Metrics(p, in, out));
  }

  // Both dimensions are the two inputs' joined, as a concatenation's axis is.
  DimSources DimensionSources(const Params&, absl::Span<const InputInfo>, absl::Span<const OutputType>) const override {
    return {std::vector<DimSource>{{DimSource::kConcat, 0, 0}, {DimSource::kConcat, 0, 1}}};
  }

  // Two matrices of one kind (both weights in the rules that use it). Enumerated only where
  // --ops names it: its rules need a fourth matrix, which the default set does without.
  std::vector<GeneratorVariant> GeneratorVariants() const override {
    GeneratorVariant v{.label = "", .params = Params(), .arity = 2, .rank = 2, .same_kind = true};
    v.roles = {GenRole::kMatrix, GenRole::kMatrix};
    v.only_when_named = true;
    return {v};
  }

  absl::StatusOr<SmtForm> Smt(const Params&, int num_inputs, int) const override {
    return SmtCall(name(), num_inputs, 2, "blockdiag");
  }

  // Where it is not folded (matrices computed at run time): each matrix padded with zeros
  // to the joined width (Pad's widths an input, as from opset 11, the oldest imported),
  // the two stacked.
  absl::Status ToOnnx(const Params&, OnnxExportNode& e) const override {
    const Shape &b = e.input_info(0).shape, &d = e.input_info(1).shape;
    const std::string top = e.NewName("blockdiag_top"), bottom = e.NewName("blockdiag_bottom");
    const Shape four{4};  // named: GCC 12 warns falsely on a temporary InlinedVector here
    auto widths = [&](std::vector<int64_t> pads) {
      return e.AddInitializer("blockdiag_pads", *TensorData::Int64(four, std::move(pads)));
    };
    e.AddNode("Pad", {e.input(0), widths({0, 0, 0, d[1]})}, {top});
    e.AddNode("Pad", {e.input(1), widths({0, b[1], 0, 0})}, {bottom});
    OnnxExportNode::SetInt(e.AddNode("Concat", {top, bottom}, {e.output(0)}), "axis", 0);
    return absl::OkStatus();
  }
};

TASO_REGISTER_OP(BlockDiag);

}  // namespace
}  // namespace taso::ops
