// Opaque: an ONNX node the library does not model. It keeps its NodeProto whole and
// passes through import and export unchanged; the reference executor cannot run it.
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

class Opaque : public OpDef {
 public:
  absl::string_view name() const override { return op_names::kOpaque; }
  bool is_opaque() const override { return true; }
  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params&, absl::Span<const InputInfo>) const override {
    return absl::FailedPreconditionError("an opaque node's output types come from the ONNX model");
  }
  absl::Status RunFloat(const Params&, KernelArgs<float>&) const override {
    return absl::UnimplementedError("opaque nodes cannot be executed");
  }
  absl::Status RunUint32(const Params&, KernelArgs<uint32_t>&) const override {
    return absl::UnimplementedError("opaque nodes cannot be executed");
  }
};

TASO_REGISTER_OP(Opaque);

}  // namespace
}  // namespace taso::ops
