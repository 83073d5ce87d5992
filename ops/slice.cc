// Slice (opset 10+): the part of a tensor from constant starts to ends, with optional
// constant axes and steps, as ONNX defines it: negative indices count from the end, and
// indices are clamped to the dimension. Bounds known only at run time stay opaque. Of
// int64 constants it is folded at import.
#include <limits>

#include "op_util.h"
#include "shape_fold.h"
#include "slice_window.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {

absl::StatusOr<SliceWindow> ReadSliceWindow(absl::Span<const InputInfo> in) {
  RETURN_IF_ERROR(ExpectInputs(in, 3, 5));
  RETURN_IF_ERROR(ExpectFloat(in[0], "data"));
  const Shape& shape = in[0].shape;
  const int rank = static_cast<int>(shape.size());
  ASSIGN_OR_RETURN(auto starts, ConstantInts(in[1], "starts"));
  ASSIGN_OR_RETURN(auto ends, ConstantInts(in[2], "ends"));
  std::vector<int64_t> axes, steps(starts.size(), 1);
  if (in.size() > 3 && in[3].present) {
    ASSIGN_OR_RETURN(axes, ConstantInts(in[3], "axes"));
  } else {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (in.size() > 4 && in[4].present) {
    ASSIGN_OR_RETURN(steps, ConstantInts(in[4], "steps"));
  }
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return Bad("starts, ends, axes and steps differ in length");
  SliceWindow w{std::vector<int64_t>(rank, 0), std::vector<int64_t>(rank, 1), shape};
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    ASSIGN_OR_RETURN(int axis, NormalizeAxis(axes[i], rank));
    if (seen[axis]) return Bad(absl::StrCat("axis ", axis, " is sliced twice"));
    seen[axis] = true;
    const int64_t dim = shape[axis], step = steps[i];
    if (step == 0) return Bad("a slice step is 0");
    int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
    // The count is ceil(span / |step|), written so that no step (up to INT64_MIN) overflows.
    const int64_t stride =
        step == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : std::abs(step);
    int64_t count = 0;  // an empty dimension stays empty
    if (dim > 0 && step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      count = e > s ? (e - s - 1) / stride + 1 : 0;
    } else if (dim > 0) {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      count = s > e ? (s - e - 1) / stride + 1 : 0;
    }
    w.start[axis] = s;
    w.step[axis] = step;
    w.out[axis] = count;
  }
  return w;
}

SliceStrides StridesOf(const SliceWindow& w, const Shape& input) {
  const Shape plain = RowMajorStrides(input);
  SliceStrides read;
  for (size_t d = 0; d < input.size(); ++d) {
    // A dimension of one element is read once: its step does not matter (and may be huge).
    read.strides.push_back(w.out[d] > 1 ? plain[d] * w.step[d] : plain[d]);
    read.first += w.start[d] * plain[d];
  }
  return read;
}

namespace {

class Slice : public KernelOp<Slice> {
 public:
  absl::string_view name() const override { return op_names::kSlice; }

  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params&, absl::Span<const InputInfo> in) const override {
    ASSIGN_OR_RETURN(SliceWindow w, ReadSliceWindow(in));
    return std::vector<OutputType>{{DataType::kFloat32, w.out}};
  }

  template <typename S>
  static absl::Status Compute(const Params&, KernelArgs<S>& a) {
    std::vector<InputInfo> in;
    for (size_t i = 0; i < a.in.size(); ++i) {
      InputInfo info;
      info.present = a.in[i] != nullptr || a.constant[i] != nullptr;
      if (a.in[i]) info.shape = a.in[i]->shape;
      info.constant = a.constant[i];
      if (a.constant[i]) info.dtype = a.constant[i]->dtype();
      in.push_back(std::move(info));
    }
    ASSIGN_OR_RETURN(SliceWindow w, ReadSliceWindow(in));
    const TensorView<S>& x = *a.in[0];
    Tensor<S>& y = *a.out[0];
    const int rank = x.rank();
    std::vector<int64_t> stride(rank, 1);
    for (int d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * x.shape[d + 1];
    std::vector<int64_t> index(rank, 0);  // the output element's index, as an odometer
    for (int64_t i = 0; i < y.numel(); ++i) {
      int64_t offset = 0;
      for (int d = 0; d < rank; ++d) offset += (w.start[d] + index[d] * w.step[d]) * stride[d];
      y.data[i] = x.data[offset];
      for (int d = rank - 1; d >= 0 && ++index[d] == y.shape[d]; --d) index[d] = 0;
    }
    return absl::OkStatus();
  }

  OpMetrics Metrics(const Params& p, absl::Span<const InputInfo> in, absl::Span<const OutputType> out) const override {
    return MovesDataOnly(OpDef::Metrics(p, in.subspan(0, 1), out));
  }

  std::vector<std::string> onnx_op_types() const override { return {"Slice"}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override {
    if (node.opset() < 10) return std::nullopt;  // bounds as attributes: kept opaque
    const auto& in = node.inputs();
    for (size_t i = 1; i < in.size(); ++i)
      if (in[i].present && in[i].constant == nullptr) return std::nullopt;  // bounds known only at run time
    return Params();
  }
  absl::Status ToOnnx(const Params&, OnnxExportNode& e) const override {
    EmitSame(e, "Slice");
    return absl::OkStatus();
  }
};

TASO_REGISTER_OP(Slice);

// Of an int64 constant with constant bounds (shape arithmetic: PyTorch reverses the pairs
// of F.pad's list with a step of -1), folded at import.
// (Bounds known only at run time fail the operator's own inference, so nothing folds.)
std::optional<TensorDataPtr> FoldSlice(const onnx::NodeProto&, int opset, const std::vector<InputInfo>& in) {
  return opset < 10 ? std::nullopt : MoveInt64ByKernel(Slice(), Params(), in);
}
TASO_REGISTER_ONNX_FOLDER("Slice", FoldSlice);

}  // namespace
}  // namespace taso::ops
