// ScalarMul: multiplies a tensor by a one-element tensor (TASO's smul). Imported from an
// ONNX Mul whose second operand has one element and no higher rank than the first.
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

class ScalarMul : public KernelOp<ScalarMul> {
 public:
  absl::string_view name() const override { return op_names::kScalarMul; }

  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params&, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 2, 2));
    RETURN_IF_ERROR(ExpectFloat(in[0], "X"));
    RETURN_IF_ERROR(ExpectFloat(in[1], "scalar"));
    if (NumElements(in[1].shape) != 1 || in[1].shape.size() > in[0].shape.size())
      return Bad(absl::StrCat("scalar operand must have one element and rank at most ", in[0].shape.size(), ", got ",
                              ShapeToString(in[1].shape)));
    return std::vector<OutputType>{{DataType::kFloat32, in[0].shape}};
  }

  std::optional<Params> AtRowRank(const Params& p, absl::Span<const InputInfo> in, const std::vector<bool>& rows,
                                  int to_rank) const override {
    if (in.size() != 2 || !rows[0] || rows[1] || !ElementwiseRowwise(in, rows, to_rank)) return std::nullopt;
    return p;
  }

  template <typename S>
  static absl::Status Compute(const Params&, KernelArgs<S>& a) {
    const S s = a.in[1]->data[0];
    const auto& x = a.in[0]->data;
    auto& y = a.out[0]->data;
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * s;
    return absl::OkStatus();
  }

  DimSources DimensionSources(const Params&, absl::Span<const InputInfo> in,
                              absl::Span<const OutputType> out) const override {
    return ElementwiseSources(in.subspan(0, 1), out);
  }

  std::vector<GeneratorVariant> GeneratorVariants() const override {
    return {GeneratorVariant{.arity = 2, .roles = {GenRole::kTensor, GenRole::kScalar}}};
  }
  std::vector<std::string> onnx_op_types() const override { return {"Mul"}; }
  int onnx_import_priority() const override { return 1; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override {
    const auto& in = node.inputs();
    if (in.size() != 2 || NumElements(in[1].shape) != 1 || in[1].shape.size() > in[0].shape.size()) return std::nullopt;
    return Params();
  }
  absl::Status ToOnnx(const Params&, OnnxExportNode& e) const override {
    EmitSame(e, "Mul");
    return absl::OkStatus();
  }
  absl::StatusOr<SmtForm> Smt(const Params&, int num_inputs, int) const override {
    return SmtCall(name(), num_inputs, 2, "smul");
  }
};

TASO_REGISTER_OP(ScalarMul);

}  // namespace
}  // namespace taso::ops
