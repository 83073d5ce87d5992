// Reshape: a new shape from a constant int64 shape input (0 copies the input dimension
// unless allowzero, -1 is inferred), as ONNX defines it.
#include "taso/ir/ops/reshape.h"
#include "taso/ir/ops/names.h"

#include <limits>

#include "op_util.h"
#include "shape_fold.h"

namespace taso::ops {
namespace {

std::string TargetText(absl::Span<const int64_t> target) { return ShapeToString(Shape(target.begin(), target.end())); }

// `in` reshaped to `target`, as ONNX defines it.
absl::StatusOr<Shape> Reshaped(const Shape& in, absl::Span<const int64_t> target, bool allowzero) {
  Shape out;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == 0 && !allowzero) {
      if (i >= in.size()) return Bad("shape has a 0 beyond the input's rank");
      d = in[i];
    }
    if (d == -1) {
      if (infer >= 0) return Bad("shape has more than one -1");
      infer = static_cast<int>(i);
      out.push_back(1);
      continue;
    }
    if (d < 0) return Bad(absl::StrCat("shape has a negative dimension ", d));
    if (d > 0 && known > std::numeric_limits<int64_t>::max() / d)
      return Bad(absl::StrCat("shape ", TargetText(target), " has more elements than int64 counts"));
    known *= d;
    out.push_back(d);
  }
  const int64_t total = NumElements(in);
  if (infer >= 0) {
    if (known == 0 || total % known != 0)
      return Bad(absl::StrCat("cannot reshape ", ShapeToString(in), " to ", TargetText(target)));
    out[infer] = total / known;
  }
  if (NumElements(out) != total)
    return Bad(absl::StrCat("cannot reshape ", ShapeToString(in), " (", total, " elements) to ", ShapeToString(out)));
  return out;
}

class Reshape : public KernelOp<Reshape> {
 public:
  absl::string_view name() const override { return op_names::kReshape; }

  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params& p, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 2, 2));
    RETURN_IF_ERROR(ExpectFloat(in[0], "data"));
    ASSIGN_OR_RETURN(auto target, ConstantInts(in[1], "shape"));
    ASSIGN_OR_RETURN(Shape out, Reshaped(in[0].shape, target, p.Int("allowzero", 0) != 0));
    return std::vector<OutputType>{{DataType::kFloat32, out}};
  }

  template <typename S>
  static absl::Status Compute(const Params& p, KernelArgs<S>& a) {
    return CopyFirstInput::Compute(p, a);
  }
  OpMetrics Metrics(const Params&, absl::Span<const InputInfo>, absl::Span<const OutputType>) const override {
    return OpMetrics{};  // a view: no data moves
  }

  std::vector<std::string> onnx_op_types() const override { return {"Reshape"}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override {
    const auto& in = node.inputs();
    if (in.size() != 2 || in[1].constant == nullptr) return std::nullopt;  // shape known only at run time
    Params p;
    if (node.Int("allowzero", 0) != 0) p.Set("allowzero", int64_t{1});
    return p;
  }
  absl::Status ToOnnx(const Params& p, OnnxExportNode& e) const override {
    onnx::NodeProto* n = EmitSame(e, "Reshape");
    if (p.Int("allowzero", 0) != 0) OnnxExportNode::SetInt(n, "allowzero", 1);
    return absl::OkStatus();
  }
};

TASO_REGISTER_OP(Reshape);

// Of an int64 constant (shape arithmetic: PyTorch's `expand(n, -1, -1)` flattens its
// target), folded at import: the same values at the new shape.
std::optional<TensorDataPtr> FoldReshape(const onnx::NodeProto& node, int, const std::vector<InputInfo>& in) {
  if (in.size() != 2 || !AllInt64Constants(in)) return std::nullopt;
  const TensorData& data = *in[0].constant;
  absl::StatusOr<Shape> shape = Reshaped(data.shape(), in[1].constant->ints(), IntAttribute(node, "allowzero", 0) != 0);
  if (!shape.ok()) return std::nullopt;
  return TensorData::Int64(*std::move(shape), std::vector<int64_t>(data.ints().begin(), data.ints().end()));
}
TASO_REGISTER_ONNX_FOLDER("Reshape", FoldReshape);

}  // namespace

const OpDef& ReshapeOp() {
  static const OpDef* op = OpRegistry::Global().Find(Reshape().name());
  return *op;
}
}  // namespace taso::ops
