// GlobalAveragePool: [N, C, H, W] -> [N, C, 1, 1], the mean over each plane.
#include "pool_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

class GlobalAveragePool : public KernelOp<GlobalAveragePool> {
 public:
  absl::string_view name() const override { return op_names::kGlobalAveragePool; }
  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params&, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 1, 1));
    RETURN_IF_ERROR(ExpectFloat(in[0], "X"));
    RETURN_IF_ERROR(ExpectRank(in[0], 4, "X"));
    return std::vector<OutputType>{{DataType::kFloat32, Shape{in[0].shape[0], in[0].shape[1], 1, 1}}};
  }
  template <typename S>
  static absl::Status Compute(const Params&, KernelArgs<S>& a) {
    const Shape& x = a.in[0]->shape;
    Window2D w{x[2], x[3], 1, 1, 1, 1, 0, 0, 0, 0, false};
    Pool2D<S>(
        *a.in[0], *a.out[0], w, Domain<S>::Zero(), [](S acc, S v) { return acc + v; },
        [](S acc, int64_t inside, int64_t) { return acc * Domain<S>::InverseCount(inside); });
    return absl::OkStatus();
  }
  std::vector<std::string> onnx_op_types() const override { return {"GlobalAveragePool"}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override {
    if (node.inputs().size() != 1 || node.inputs()[0].shape.size() != 4) return std::nullopt;
    return Params();
  }
  absl::Status ToOnnx(const Params&, OnnxExportNode& e) const override {
    EmitSame(e, "GlobalAveragePool");
    return absl::OkStatus();
  }
};

TASO_REGISTER_OP(GlobalAveragePool);

}  // namespace
}  // namespace taso::ops
