// Identity: passes its input on unchanged.
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

class Identity : public KernelOp<Identity> {
 public:
  absl::string_view name() const override { return op_names::kIdentity; }
  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params&, absl::Span<const InputInfo> in) const override {
    return LikeOneFloatInput(in, "input");
  }
  std::optional<Params> AtRowRank(const Params& p, absl::Span<const InputInfo> in, const std::vector<bool>& rows,
                                  int to_rank) const override {
    if (!ElementwiseRowwise(in, rows, to_rank)) return std::nullopt;
    return p;
  }

  template <typename S>
  static absl::Status Compute(const Params& p, KernelArgs<S>& a) {
    return CopyFirstInput::Compute(p, a);
  }
  std::vector<std::string> onnx_op_types() const override { return {"Identity"}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode&) const override { return Params(); }
  absl::Status ToOnnx(const Params&, OnnxExportNode& e) const override {
    EmitSame(e, "Identity");
    return absl::OkStatus();
  }
};

TASO_REGISTER_OP(Identity);

}  // namespace
}  // namespace taso::ops
