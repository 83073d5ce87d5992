// Split: cuts a tensor along an axis into pieces of stated sizes. The sizes are a
// parameter, or (ONNX opset 13+) a constant second input; they are always explicit, so a
// rule can state them in terms of its inputs' dimensions.
#include "taso/ir/ops/split.h"
#include "taso/ir/ops/names.h"

#include "op_util.h"

namespace taso::ops {
namespace {

absl::StatusOr<std::vector<int64_t>> Sizes(const Params& p, absl::Span<const InputInfo> in) {
  if (in.size() == 2 && in[1].present) return ConstantInts(in[1], "split sizes");
  if (!p.Has("sizes")) return Bad("split sizes are not given");
  return p.Ints("sizes");
}

class Split : public KernelOp<Split> {
 public:
  absl::string_view name() const override { return op_names::kSplit; }

  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params& p, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 1, 2));
    RETURN_IF_ERROR(ExpectFloat(in[0], "X"));
    ASSIGN_OR_RETURN(int axis, NormalizeAxis(p.Int("axis", 0), static_cast<int>(in[0].shape.size())));
    ASSIGN_OR_RETURN(auto sizes, Sizes(p, in));
    if (sizes.empty()) return Bad("split into zero pieces");
    int64_t total = 0;
    std::vector<OutputType> out;
    for (int64_t s : sizes) {
      if (s < 0) return Bad("split sizes must not be negative");
      total += s;
      Shape shape = in[0].shape;
      shape[axis] = s;
      out.push_back({DataType::kFloat32, shape});
    }
    if (total != in[0].shape[axis])
      return Bad(absl::StrCat("split sizes add up to ", total, " but axis ", axis, " of ", ShapeToString(in[0].shape),
                              " has ", in[0].shape[axis]));
    return out;
  }

  std::optional<Params> AtRowRank(const Params& p, absl::Span<const InputInfo> in, const std::vector<bool>& rows,
                                  int to_rank) const override {
    if (rows.size() > 1 && rows[1]) return std::nullopt;
    return LastAxisAtRowRank(p, in, rows, "axis", 0, to_rank);
  }

  template <typename S>
  static absl::Status Compute(const Params& p, KernelArgs<S>& a) {
    const TensorView<S>& x = *a.in[0];
    ASSIGN_OR_RETURN(int axis, NormalizeAxis(p.Int("axis", 0), x.rank()));
    const auto [outer, inner] = DimensionsAround(x.shape, axis);
    const int64_t in_row = x.shape[axis] * inner;
    int64_t offset = 0;
    for (Tensor<S>* y : a.out) {
      const int64_t row = y->shape[axis] * inner;
      for (int64_t o = 0; o < outer; ++o)
        std::copy_n(x.data.data() + o * in_row + offset, row, y->data.data() + o * row);
      offset += row;
    }
    return absl::OkStatus();
  }

  OpMetrics Metrics(const Params& p, absl::Span<const InputInfo> in, absl::Span<const OutputType> out) const override {
    return MovesDataOnly(OpDef::Metrics(p, in.subspan(0, 1), out));
  }

  DimSources DimensionSources(const Params& p, absl::Span<const InputInfo> in,
                              absl::Span<const OutputType> out) const override {
    const int rank = static_cast<int>(in[0].shape.size());
    auto axis = NormalizeAxis(p.Int("axis", 0), rank);
    DimSources all;
    for (size_t o = 0; o < out.size(); ++o) {
      std::vector<DimSource> d(rank);
      for (int i = 0; i < rank; ++i) d[i] = DimSource::Copy(0, i);
      if (axis.ok()) d[*axis] = DimSource{DimSource::kSplitPart, 0, *axis};
      all.push_back(std::move(d));
    }
    return all;
  }

  // Splits undo the most recent concatenation of their axis (TASO's split trees).
  std::vector<GeneratorVariant> GeneratorVariants() const override {
    std::vector<GeneratorVariant> out;
    for (int64_t axis : {0, 1})
      out.push_back(
          {.label = absl::StrCat("axis", axis), .params = Params().Set("axis", axis), .split_at_concat = true});
    return out;
  }
  std::vector<std::string> onnx_op_types() const override { return {"Split"}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override {
    const auto& in = node.inputs();
    if (in.empty() || in[0].shape.empty()) return std::nullopt;
    Params p;
    const int64_t axis = node.Int("axis", 0);
    p.Set("axis", axis);
    const bool sizes_input = in.size() == 2 && in[1].present;
    if (sizes_input) {
      if (in[1].constant == nullptr) return std::nullopt;  // sizes known only at run time
      return p;
    }
    std::vector<int64_t> sizes = node.opset() < 13 ? node.Ints("split") : std::vector<int64_t>{};
    if (sizes.empty()) {
      ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> pieces, EqualPieces(node, axis));
      if (!pieces) return std::nullopt;
      sizes = std::move(*pieces);
    }
    p.Set("sizes", sizes);
    return p;
  }
  // One piece per output, of equal sizes. From opset 18 the count may be the attribute
  // num_outputs, and then the last piece is smaller when the dimension does not divide.
  static absl::StatusOr<std::optional<std::vector<int64_t>>> EqualPieces(OnnxImportNode& node, int64_t axis) {
    ASSIGN_OR_RETURN(int ax, NormalizeAxis(axis, static_cast<int>(node.inputs()[0].shape.size())));
    const int64_t n = node.num_outputs(), dim = node.inputs()[0].shape[ax];
    const bool counted = node.opset() >= 18 && node.Has("num_outputs");
    if (n < 1 || (counted && node.Int("num_outputs", 0) != n)) return std::nullopt;
    if (dim % n == 0) return std::vector<int64_t>(n, dim / n);
    if (!counted) return std::nullopt;
    const int64_t piece = (dim + n - 1) / n;
    if (piece * (n - 1) >= dim) return std::nullopt;  // the last piece would be empty or negative
    std::vector<int64_t> sizes(n, piece);
    sizes.back() = dim - piece * (n - 1);
    return sizes;
  }

  absl::Status ToOnnx(const Params& p, OnnxExportNode& e) const override {
    std::vector<std::string> inputs = {e.input(0)};
    const bool has_sizes_input = e.num_inputs() == 2 && !e.input(1).empty();
    std::vector<int64_t> sizes = p.Ints("sizes");
    if (e.opset() >= 13) {
      if (has_sizes_input)
        inputs.push_back(e.input(1));
      else
        inputs.push_back(e.AddInitializer(e.node_name() + "_split",
                                          *TensorData::Int64({static_cast<int64_t>(sizes.size())}, sizes)));
    } else if (has_sizes_input) {
      const TensorData* c = e.input_info(1).constant;
      if (c == nullptr) return absl::InvalidArgumentError("Split sizes must be constant before opset 13");
      sizes.assign(c->ints().begin(), c->ints().end());
    }
    onnx::NodeProto* n = e.AddNode("Split", inputs, e.outputs());
    OnnxExportNode::SetInt(n, "axis", p.Int("axis", 0));
    if (e.opset() < 13) OnnxExportNode::SetInts(n, "split", sizes);
    return absl::OkStatus();
  }
  // Two parts, cut where the input was last concatenated along the axis (split trees).
  absl::StatusOr<SmtForm> Smt(const Params& p, int num_inputs, int num_outputs) const override {
    if (num_outputs != 2) return Bad("only a Split in two has an SMT encoding");
    ASSIGN_OR_RETURN(SmtForm f, SmtCall(name(), num_inputs, 1, "split0", {{"axis", p.Int("axis", 0)}}));
    f.functions.push_back("split1");
    return f;
  }
};

TASO_REGISTER_OP(Split);

}  // namespace

bool IsSplit(const OpDef& op) { return dynamic_cast<const Split*>(&op) != nullptr; }

int64_t SplitAxis(const Params& params) { return params.Int("axis", 0); }

std::optional<std::vector<int64_t>> SplitSizes(const Params& params) {
  if (!params.Has("sizes")) return std::nullopt;
  return params.Ints("sizes");
}

Params SplitParams(int64_t axis, const std::vector<int64_t>& sizes) {
  return Params().Set("axis", axis).Set("sizes", sizes);
}

}  // namespace taso::ops
