// Pad (constant mode): pads each dimension with a constant, pads from a constant int64
// input [begin_0.., end_0..] and an optional one-element constant_value input.
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

// Each pad and padded dimension stays below this, so their sum cannot overflow int64.
constexpr int64_t kMaxPad = int64_t{1} << 60;

class Pad : public KernelOp<Pad> {
 public:
  absl::string_view name() const override { return op_names::kPad; }
  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params&, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 2, 3));
    RETURN_IF_ERROR(ExpectFloat(in[0], "data"));
    ASSIGN_OR_RETURN(auto pads, ConstantInts(in[1], "pads"));
    const size_t rank = in[0].shape.size();
    if (pads.size() != 2 * rank) return Bad(absl::StrCat("pads has ", pads.size(), " values for rank ", rank));
    if (in.size() == 3 && in[2].present) {
      RETURN_IF_ERROR(ExpectFloat(in[2], "constant_value"));
      if (NumElements(in[2].shape) != 1) return Bad("constant_value must have one element");
    }
    Shape out = in[0].shape;
    for (size_t d = 0; d < rank; ++d) {
      if (pads[d] < 0 || pads[d + rank] < 0) return Bad("negative pads are not supported");
      if (pads[d] > kMaxPad || pads[d + rank] > kMaxPad || out[d] > kMaxPad)
        return Bad(absl::StrCat("pads or dimensions beyond ", kMaxPad));
      out[d] += pads[d] + pads[d + rank];
    }
    return std::vector<OutputType>{{DataType::kFloat32, out}};
  }
  template <typename S>
  static absl::Status Compute(const Params&, KernelArgs<S>& a) {
    const TensorView<S>& x = *a.in[0];
    Tensor<S>& y = *a.out[0];
    auto pads = a.constant[1]->ints();
    const S fill = a.in.size() == 3 && a.in[2] != nullptr ? a.in[2]->data[0] : Domain<S>::Zero();
    std::fill(y.data.begin(), y.data.end(), fill);
    const int rank = x.rank();
    if (x.numel() == 0) return absl::OkStatus();
    if (rank == 0) {
      y.data.assign(x.data.begin(), x.data.end());
      return absl::OkStatus();
    }
    Shape ys = RowMajorStrides(y.shape);
    int64_t base = 0;
    for (int d = 0; d < rank; ++d) base += pads[d] * ys[d];
    const int64_t inner = x.shape[rank - 1];
    Shape idx(rank, 0);
    int64_t dst = base;
    for (int64_t src = 0; src < x.numel(); src += inner) {
      std::copy_n(x.data.data() + src, inner, y.data.data() + dst);
      for (int d = rank - 2; d >= 0; --d) {
        dst += ys[d];
        if (++idx[d] < x.shape[d]) break;
        dst -= ys[d] * x.shape[d];
        idx[d] = 0;
      }
    }
    return absl::OkStatus();
  }
  OpMetrics Metrics(const Params& p, absl::Span<const InputInfo> in, absl::Span<const OutputType> out) const override {
    return MovesDataOnly(OpDef::Metrics(p, in.subspan(0, 1), out));
  }
  std::vector<std::string> onnx_op_types() const override { return {"Pad"}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override {
    const auto& in = node.inputs();
    if (node.Str("mode", "constant") != "constant" || in.size() < 2 || in.size() > 3) return std::nullopt;
    if (in[1].constant == nullptr) return std::nullopt;
    for (int64_t v : in[1].constant->ints())
      if (v < 0) return std::nullopt;  // cropping
    return Params();
  }
  absl::Status ToOnnx(const Params&, OnnxExportNode& e) const override {
    EmitSame(e, "Pad");
    return absl::OkStatus();
  }
};

TASO_REGISTER_OP(Pad);

}  // namespace
}  // namespace taso::ops
