// LayoutConvert: the same tensor in another physical layout (parameter "layout": plain
// row-major, or "blocked" as a backend lays channels out for its convolutions). A
// layout is invisible to the computation, so the reference kernel copies; the cpu backend
// reorders memory. It appears only in graphs a layout assignment made (never in ONNX
// files, where it would be an Identity).
#include "taso/ir/ops/layout_convert.h"
#include "taso/ir/ops/names.h"

#include "op_util.h"

namespace taso::ops {
namespace {

class LayoutConvert : public KernelOp<LayoutConvert> {
 public:
  static constexpr const char* kName = op_names::kLayoutConvert;
  absl::string_view name() const override { return kName; }
  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params& p, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 1, 1));
    RETURN_IF_ERROR(ExpectFloat(in[0], "input"));
    const std::string layout = p.Str("layout", "plain");
    if (layout != "plain" && layout != "blocked") return Bad(absl::StrCat("unknown layout '", layout, "'"));
    return std::vector<OutputType>{{DataType::kFloat32, in[0].shape}};
  }
  template <typename S>
  static absl::Status Compute(const Params& p, KernelArgs<S>& a) {
    return CopyFirstInput::Compute(p, a);
  }
  absl::Status ToOnnx(const Params&, OnnxExportNode& e) const override {
    EmitSame(e, "Identity");
    return absl::OkStatus();
  }
};

TASO_REGISTER_OP(LayoutConvert);

}  // namespace

const OpDef& LayoutConvertOp() {
  static const OpDef* op = OpRegistry::Global().Find(LayoutConvert::kName);
  return *op;
}

Params LayoutConvertParams(bool to_blocked) {
  Params params;
  if (to_blocked) params.Set("layout", "blocked");
  return params;
}

}  // namespace taso::ops
