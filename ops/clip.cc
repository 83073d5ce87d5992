// Clip: limits values to [min, max] (ReLU6 in MobileNet). The bounds are optional
// one-element inputs (ONNX opset 11+); an absent bound does not limit.
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

class Clip : public KernelOp<Clip> {
 public:
  absl::string_view name() const override { return op_names::kClip; }
  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params&, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 1, 3));
    RETURN_IF_ERROR(ExpectFloat(in[0], "input"));
    for (size_t i = 1; i < in.size(); ++i) {
      if (!in[i].present) continue;
      RETURN_IF_ERROR(ExpectFloat(in[i], i == 1 ? "min" : "max"));
      if (NumElements(in[i].shape) != 1) return Bad("min and max must have one element");
    }
    return std::vector<OutputType>{{DataType::kFloat32, in[0].shape}};
  }
  std::optional<Params> AtRowRank(const Params& p, absl::Span<const InputInfo> in, const std::vector<bool>& rows,
                                  int to_rank) const override {
    if (!ElementwiseRowwise(in, rows, to_rank)) return std::nullopt;
    return p;
  }

  template <typename S>
  static absl::Status Compute(const Params&, KernelArgs<S>& a) {
    const TensorView<S>* lo = a.in.size() > 1 ? a.in[1].get() : nullptr;
    const TensorView<S>* hi = a.in.size() > 2 ? a.in[2].get() : nullptr;
    const auto& x = a.in[0]->data;
    auto& y = a.out[0]->data;
    for (size_t i = 0; i < x.size(); ++i) {
      S v = x[i];
      if (lo) v = Domain<S>::Max(v, lo->data[0]);
      if (hi && Domain<S>::Greater(v, hi->data[0])) v = hi->data[0];
      y[i] = v;
    }
    return absl::OkStatus();
  }
  std::vector<std::string> onnx_op_types() const override { return {"Clip"}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override { return Params(); }
  absl::Status ToOnnx(const Params&, OnnxExportNode& e) const override {
    EmitSame(e, "Clip");
    return absl::OkStatus();
  }
};

TASO_REGISTER_OP(Clip);

}  // namespace
}  // namespace taso::ops
