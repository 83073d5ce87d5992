// ReduceMean over the given axes (all when none are given), keeping the reduced
// dimensions as 1 when keepdims is set. The axes are the parameter `axes`: read from the
// attribute before ONNX opset 18 and from the constant second input from 18 on (the input
// stays the node's second input, read by nothing but the export).
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

absl::StatusOr<std::vector<bool>> ReducedAxes(const Params& p, int rank) {
  std::vector<bool> reduced(rank, !p.Has("axes"));
  for (int64_t a : p.Ints("axes")) {
    ASSIGN_OR_RETURN(int axis, NormalizeAxis(a, rank));
    if (reduced[axis]) return Bad("axes has a repeated axis");
    reduced[axis] = true;
  }
  return reduced;
}

class ReduceMean : public KernelOp<ReduceMean> {
 public:
  absl::string_view name() const override { return op_names::kReduceMean; }
  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params& p, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 1, 2));
    RETURN_IF_ERROR(ExpectFloat(in[0], "data"));
    const int rank = static_cast<int>(in[0].shape.size());
    ASSIGN_OR_RETURN(auto reduced, ReducedAxes(p, rank));
    const bool keep = p.Int("keepdims", 1) != 0;
    Shape out;
    for (int d = 0; d < rank; ++d) {
      if (!reduced[d])
        out.push_back(in[0].shape[d]);
      else if (keep)
        out.push_back(1);
    }
    return std::vector<OutputType>{{DataType::kFloat32, out}};
  }
  template <typename S>
  static absl::Status Compute(const Params& p, KernelArgs<S>& a) {
    const TensorView<S>& x = *a.in[0];
    Tensor<S>& y = *a.out[0];
    const int rank = x.rank();
    ASSIGN_OR_RETURN(auto reduced, ReducedAxes(p, rank));
    // Output stride of each input dimension (0 where reduced).
    Shape out_dims;
    for (int d = 0; d < rank; ++d) out_dims.push_back(reduced[d] ? 1 : x.shape[d]);
    Shape os = RowMajorStrides(out_dims);
    for (int d = 0; d < rank; ++d)
      if (reduced[d]) os[d] = 0;
    std::fill(y.data.begin(), y.data.end(), Domain<S>::Zero());
    Shape idx(rank, 0);
    int64_t dst = 0;
    for (int64_t src = 0; src < x.numel(); ++src) {
      y.data[dst] += x.data[src];
      for (int d = rank - 1; d >= 0; --d) {
        dst += os[d];
        if (++idx[d] < x.shape[d]) break;
        dst -= os[d] * x.shape[d];
        idx[d] = 0;
      }
    }
    const int64_t count = y.numel() == 0 ? 1 : x.numel() / y.numel();
    const S inv = Domain<S>::InverseCount(count);
    for (S& v : y.data) v = v * inv;
    return absl::OkStatus();
  }
  std::vector<std::string> onnx_op_types() const override { return {"ReduceMean"}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override {
    Params p;
    p.Set("keepdims", node.Int("keepdims", 1));
    if (node.opset() < kAxesInputOpset) {
      if (node.inputs().size() != 1) return std::nullopt;
      if (node.Has("axes")) p.Set("axes", node.Ints("axes"));
      return p;
    }
    if (node.Int("noop_with_empty_axes", 0) != 0) return std::nullopt;  // empty axes would mean identity
    const auto& in = node.inputs();
    if (in.size() == 1 || (in.size() == 2 && !in[1].present)) return p;
    if (in.size() != 2 || in[1].constant == nullptr || in[1].constant->dtype() != DataType::kInt64)
      return std::nullopt;  // axes known only at run time
    const auto& axes = in[1].constant->ints();
    if (!axes.empty()) p.Set("axes", std::vector<int64_t>(axes.begin(), axes.end()));
    return p;
  }
  absl::Status ToOnnx(const Params& p, OnnxExportNode& e) const override {
    std::vector<std::string> inputs = {e.input(0)};
    if (e.opset() >= kAxesInputOpset && p.Has("axes")) {
      const bool has_axes_input = e.num_inputs() == 2 && !e.input(1).empty();
      const std::vector<int64_t> axes = p.Ints("axes");
      inputs.push_back(has_axes_input
                           ? e.input(1)
                           : e.AddInitializer(e.node_name() + "_axes",
                                              *TensorData::Int64({static_cast<int64_t>(axes.size())}, axes)));
    }
    onnx::NodeProto* n = e.AddNode("ReduceMean", inputs, e.outputs());
    if (e.opset() < kAxesInputOpset && p.Has("axes")) OnnxExportNode::SetInts(n, "axes", p.Ints("axes"));
    OnnxExportNode::SetInt(n, "keepdims", p.Int("keepdims", 1));
    return absl::OkStatus();
  }

 private:
  static constexpr int kAxesInputOpset = 18;  // axes became an input
};

TASO_REGISTER_OP(ReduceMean);

}  // namespace
}  // namespace taso::ops
