// Concat: joins tensors along an axis.
#include "taso/ir/ops/concat.h"
#include "taso/ir/ops/names.h"

#include "op_util.h"
#include "shape_fold.h"

namespace taso::ops {
namespace {

class Concat : public KernelOp<Concat> {
 public:
  absl::string_view name() const override { return op_names::kConcat; }

  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params& p, absl::Span<const InputInfo> in) const override {
    if (in.empty()) return Bad("expects at least one input");
    for (const InputInfo& i : in) RETURN_IF_ERROR(ExpectFloat(i, "of Concat"));
    const int rank = static_cast<int>(in[0].shape.size());
    ASSIGN_OR_RETURN(int axis, NormalizeAxis(p.Int("axis", 0), rank));
    Shape out = in[0].shape;
    for (size_t k = 1; k < in.size(); ++k) {
      const Shape& s = in[k].shape;
      bool agree = static_cast<int>(s.size()) == rank;
      for (int d = 0; agree && d < rank; ++d) agree = d == axis || s[d] == out[d];
      if (!agree)
        return Bad(absl::StrCat("input shapes ", ShapeToString(in[0].shape), " and ", ShapeToString(s),
                                " do not agree outside axis ", axis));
      out[axis] += s[axis];
    }
    return std::vector<OutputType>{{DataType::kFloat32, out}};
  }

  std::optional<Params> AtRowRank(const Params& p, absl::Span<const InputInfo> in, const std::vector<bool>& rows,
                                  int to_rank) const override {
    for (bool row : rows)
      if (!row) return std::nullopt;
    return LastAxisAtRowRank(p, in, rows, "axis", 0, to_rank);
  }

  template <typename S>
  static absl::Status Compute(const Params& p, KernelArgs<S>& a) {
    Tensor<S>& y = *a.out[0];
    ASSIGN_OR_RETURN(int axis, NormalizeAxis(p.Int("axis", 0), y.rank()));
    const auto [outer, inner] = DimensionsAround(y.shape, axis);
    const int64_t out_row = y.shape[axis] * inner;
    int64_t offset = 0;
    for (const KernelInput<S>& x : a.in) {
      const int64_t row = x->shape[axis] * inner;
      for (int64_t o = 0; o < outer; ++o)
        std::copy_n(x->data.data() + o * row, row, y.data.data() + o * out_row + offset);
      offset += row;
    }
    return absl::OkStatus();
  }

  OpMetrics Metrics(const Params& p, absl::Span<const InputInfo> in, absl::Span<const OutputType> out) const override {
    return MovesDataOnly(OpDef::Metrics(p, in, out));
  }

  DimSources DimensionSources(const Params& p, absl::Span<const InputInfo> in,
                              absl::Span<const OutputType> out) const override {
    const int rank = static_cast<int>(out[0].shape.size());
    auto axis = NormalizeAxis(p.Int("axis", 0), rank);
    std::vector<DimSource> d(rank);
    for (int i = 0; i < rank; ++i) d[i] = DimSource::Copy(0, i);
    if (axis.ok()) d[*axis] = DimSource{DimSource::kConcat, 0, *axis};
    return {d};
  }

  std::vector<GeneratorVariant> GeneratorVariants() const override {
    std::vector<GeneratorVariant> out;
    for (int64_t axis : {0, 1})
      out.push_back(
          {.label = absl::StrCat("axis", axis), .params = Params().Set("axis", axis), .arity = 2, .same_kind = true});
    // Two bias vectors joined: the bias of two products merged into one (Gemm reads it).
    GeneratorVariant biases{.label = "bias", .params = Params().Set("axis", int64_t{0}), .arity = 2, .rank = 1};
    biases.roles = {GenRole::kBias, GenRole::kBias};
    out.push_back(biases);
    return out;
  }
  std::vector<std::string> onnx_op_types() const override { return {"Concat"}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override {
    for (const InputInfo& i : node.inputs())
      if (!i.present) return std::nullopt;
    return Params().Set("axis", node.Int("axis", 0));
  }
  absl::Status ToOnnx(const Params& p, OnnxExportNode& e) const override {
    OnnxExportNode::SetInt(EmitSame(e, "Concat"), "axis", p.Int("axis", 0));
    return absl::OkStatus();
  }
  absl::StatusOr<SmtForm> Smt(const Params& p, int num_inputs, int) const override {
    return SmtCall(name(), num_inputs, 2, "concat", {{"axis", p.Int("axis", 0)}});
  }
};

TASO_REGISTER_OP(Concat);

// Of 1-D int64 constants, or small float32 ones (shape arithmetic), folded at import.
std::optional<TensorDataPtr> FoldConcat(const onnx::NodeProto&, int, const std::vector<InputInfo>& in) {
  const bool floats = !in.empty() && std::all_of(in.begin(), in.end(),
                                                 [](const InputInfo& i) { return SmallFloatConstant(i) != nullptr; });
  if (!floats && !AllInt64Constants(in)) return std::nullopt;
  std::vector<int64_t> ints;
  std::vector<float> reals;
  for (const InputInfo& i : in) {
    if (!i.present || i.constant->shape().size() != 1) return std::nullopt;
    ints.insert(ints.end(), i.constant->ints().begin(), i.constant->ints().end());
    reals.insert(reals.end(), i.constant->floats().begin(), i.constant->floats().end());
  }
  if (floats) {
    const int64_t n = static_cast<int64_t>(reals.size());
    return n > kMaxFoldedElements ? std::nullopt : std::optional(TensorData::Float(Shape{n}, std::move(reals)));
  }
  const int64_t n = static_cast<int64_t>(ints.size());
  return TensorData::Int64(Shape{n}, std::move(ints));
}
TASO_REGISTER_ONNX_FOLDER("Concat", FoldConcat);

}  // namespace

bool IsConcat(const OpDef& op) { return dynamic_cast<const Concat*>(&op) != nullptr; }

int64_t ConcatAxis(const Params& params) { return params.Int("axis", 0); }

const OpDef& ConcatOperator() { return *OpRegistry::Global().Find("Concat"); }

Params ConcatParams(int64_t axis) { return Params().Set("axis", axis); }

}  // namespace taso::ops
