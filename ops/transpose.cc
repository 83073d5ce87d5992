// Transpose: permutes dimensions (default: reverses them). Of an int64 constant it is
// folded at import.
#include "op_util.h"
#include "shape_fold.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

absl::StatusOr<std::vector<int64_t>> Perm(const Params& p, int rank) {
  std::vector<int64_t> perm = p.Ints("perm");
  if (perm.empty())
    for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
  if (static_cast<int>(perm.size()) != rank)
    return Bad(absl::StrCat("perm has ", perm.size(), " entries for rank ", rank));
  std::vector<bool> seen(rank, false);
  for (int64_t d : perm) {
    if (d < 0 || d >= rank || seen[d]) return Bad("perm is not a permutation");
    seen[d] = true;
  }
  return perm;
}

class Transpose : public KernelOp<Transpose> {
 public:
  absl::string_view name() const override { return op_names::kTranspose; }

  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params& p, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 1, 1));
    RETURN_IF_ERROR(ExpectFloat(in[0], "X"));
    ASSIGN_OR_RETURN(auto perm, Perm(p, static_cast<int>(in[0].shape.size())));
    Shape out;
    for (int64_t d : perm) out.push_back(in[0].shape[d]);
    return std::vector<OutputType>{{DataType::kFloat32, out}};
  }

  template <typename S>
  static absl::Status Compute(const Params& p, KernelArgs<S>& a) {
    const TensorView<S>& x = *a.in[0];
    Tensor<S>& y = *a.out[0];
    const int rank = x.rank();
    ASSIGN_OR_RETURN(auto perm, Perm(p, rank));
    if (rank == 0) {
      y.data.assign(x.data.begin(), x.data.end());
      return absl::OkStatus();
    }
    Shape in_strides = RowMajorStrides(x.shape);
    Shape src_stride(rank);  // input stride of each output dimension
    for (int d = 0; d < rank; ++d) src_stride[d] = in_strides[perm[d]];
    Shape idx(rank, 0);
    int64_t src = 0;
    const int64_t inner = y.shape[rank - 1], inner_stride = src_stride[rank - 1];
    for (int64_t o = 0; o < y.numel(); o += inner) {
      for (int64_t j = 0; j < inner; ++j) y.data[o + j] = x.data[src + j * inner_stride];
      for (int d = rank - 2; d >= 0; --d) {
        src += src_stride[d];
        if (++idx[d] < y.shape[d]) break;
        src -= src_stride[d] * y.shape[d];
        idx[d] = 0;
      }
    }
    return absl::OkStatus();
  }

  OpMetrics Metrics(const Params& p, absl::Span<const InputInfo> in, absl::Span<const OutputType> out) const override {
    return MovesDataOnly(OpDef::Metrics(p, in, out));
  }

  DimSources DimensionSources(const Params& p, absl::Span<const InputInfo> in,
                              absl::Span<const OutputType> out) const override {
    auto perm = Perm(p, static_cast<int>(in[0].shape.size()));
    std::vector<DimSource> d(out[0].shape.size());
    if (perm.ok())
      for (size_t i = 0; i < d.size(); ++i) d[i] = DimSource::Copy(0, static_cast<int>((*perm)[i]));
    return {d};
  }

  std::vector<GeneratorVariant> GeneratorVariants() const override {  // matrix transpose
    return {GeneratorVariant{.params = Params().Set("perm", std::vector<int64_t>{1, 0})}};
  }
  std::vector<std::string> onnx_op_types() const override { return {"Transpose"}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override {
    Params p;
    if (node.Has("perm")) p.Set("perm", node.Ints("perm"));
    return p;
  }
  absl::Status ToOnnx(const Params& p, OnnxExportNode& e) const override {
    onnx::NodeProto* n = EmitSame(e, "Transpose");
    if (p.Has("perm")) OnnxExportNode::SetInts(n, "perm", p.Ints("perm"));
    return absl::OkStatus();
  }
  absl::StatusOr<SmtForm> Smt(const Params& p, int num_inputs, int) const override {
    if (p.Ints("perm") != std::vector<int64_t>{1, 0})
      return Bad("only the matrix Transpose (perm [1,0]) has an SMT encoding");
    return SmtCall(name(), num_inputs, 1, "transpose");
  }
};

TASO_REGISTER_OP(Transpose);

// Of an int64 constant (shape arithmetic: PyTorch turns F.pad's list of pairs into ONNX's
// pads by a transpose), folded at import.
std::optional<TensorDataPtr> FoldTranspose(const onnx::NodeProto& node, int, const std::vector<InputInfo>& in) {
  Params params;
  if (const onnx::AttributeProto* perm = FindAttribute(node, "perm"))
    params.Set("perm", std::vector<int64_t>(perm->ints().begin(), perm->ints().end()));
  return in.size() == 1 ? MoveInt64ByKernel(Transpose(), params, in) : std::nullopt;
}
TASO_REGISTER_ONNX_FOLDER("Transpose", FoldTranspose);

}  // namespace
}  // namespace taso::ops
