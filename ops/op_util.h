// Helpers shared by several operator files: axis and broadcast rules, window arithmetic,
// the element-wise kernel templates, and ONNX attribute plumbing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "onnx/onnx_pb.h"
#include "taso/ir/onnx_node.h"
#include "taso/ir/op.h"
#include "taso/ir/scalar_domain.h"
#include "taso/ir/status_macros.h"

namespace taso::ops {

inline absl::Status Bad(absl::string_view msg) { return absl::InvalidArgumentError(msg); }

// The metrics of an operator that only moves data (concatenation, slicing, transposing):
// its bytes, no arithmetic.
inline OpMetrics MovesDataOnly(OpMetrics m) {
  m.flops = 0;
  return m;
}

// Maps a possibly negative axis into [0, rank).
absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank);

// A tensor seen as rows: the dimensions before `axis` count the rows, those from it on
// make each row (LayerNormalization's normalized slice).
struct Rows {
  int64_t count = 1, width = 1;
  Shape row;
};
absl::StatusOr<Rows> RowsFrom(const Shape& shape, int64_t axis);

// A tensor seen as [outer, shape[axis], inner]: the products of the dimensions before and
// after `axis` (a valid, non-negative axis).
struct AroundAxis {
  int64_t outer = 1, inner = 1;
};
inline AroundAxis DimensionsAround(const Shape& shape, int axis) {
  AroundAxis a;
  for (int d = 0; d < axis; ++d) a.outer *= shape[d];
  for (int d = axis + 1; d < static_cast<int>(shape.size()); ++d) a.inner *= shape[d];
  return a;
}

// ONNX (numpy) multidirectional broadcasting.
absl::StatusOr<Shape> BroadcastShapes(absl::Span<const int64_t> a, absl::Span<const int64_t> b);

// Checks the number of inputs and that the required ones are present float tensors.
absl::Status ExpectInputs(absl::Span<const InputInfo> in, int min, int max);
absl::Status ExpectFloat(const InputInfo& in, absl::string_view what);
// The types of an element-wise operator on one float input `what`: one output like it.
absl::StatusOr<std::vector<OutputType>> LikeOneFloatInput(absl::Span<const InputInfo> in, absl::string_view what);
absl::Status ExpectRank(const InputInfo& in, int rank, absl::string_view what);

// Integer values of a constant int64 input (Reshape's shape, Pad's pads, ...).
absl::StatusOr<std::vector<int64_t>> ConstantInts(const InputInfo& in, absl::string_view what);

// Output size of a sliding window along one dimension.
int64_t WindowOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin, int64_t pad_end,
                         int64_t dilation, bool ceil_mode);

// Parameters of a 2-D sliding window (convolution and pooling).
struct Window2D {
  int64_t kh, kw, sh, sw, dh, dw;
  int64_t pt, pl, pb, pr;  // pads: top, left, bottom, right
  bool ceil_mode = false;
};
absl::StatusOr<Window2D> ReadWindow(const Params& p, int64_t kh, int64_t kw);

// Reads ONNX's kernel/strides/pads/dilations/auto_pad attributes of a 2-D window op into
// params (auto_pad resolved to explicit pads from the static input shape). Returns false
// when the node uses something the library does not represent.
absl::StatusOr<bool> ReadOnnxWindow(OnnxImportNode& node, const Shape& input, int64_t kh, int64_t kw, Params& params);
void WriteOnnxWindow(const Params& p, onnx::NodeProto* n, int64_t kh, int64_t kw);

// Every output dimension copies the same dimension of one input (element-wise operators);
// with broadcasting, from an input whose dimension is not broadcast.
DimSources ElementwiseSources(absl::Span<const InputInfo> inputs, absl::Span<const OutputType> outputs);

// Explicit pads of a window: the "padding" mode ("same": k/2 on every side, for odd
// kernels, so the output keeps the input size at stride 1 whatever that size is; "valid":
// none) when given, else the "pads" parameter.
absl::StatusOr<std::vector<int64_t>> WindowPads(const Params& p, int64_t kh, int64_t kw);
// The window's parameters written out in full (strides, pads, dilations), the padding
// mode dropped; other parameters as in `p`.
Params CanonicalWindowParams(const Params& p, const Window2D& w);
// True when the window keeps spatial sizes for every input size (stride 1, same padding).
bool KeepsSpatialSize(const Window2D& w);
// N and C copy the input's; H and W too where the window keeps the spatial size.
DimSources WindowSources(const Window2D& w, int channel_input, int channel_dim);

// Writes one ONNX node of `op_type` with the node's own inputs and outputs.
onnx::NodeProto* EmitSame(OnnxExportNode& e, absl::string_view op_type);

// Applies f elementwise with broadcasting: out = f(a, b).
template <typename S, typename F>
void BroadcastBinary(const std::type_identity_t<TensorView<S>>& a, const std::type_identity_t<TensorView<S>>& b,
                     Tensor<S>& out, F f) {
  const int64_t n = out.numel();
  if (a.shape == out.shape && b.shape == out.shape) {
    for (int64_t i = 0; i < n; ++i) out.data[i] = f(a.data[i], b.data[i]);
    return;
  }
  if (a.shape == out.shape && b.numel() == 1) {
    for (int64_t i = 0; i < n; ++i) out.data[i] = f(a.data[i], b.data[0]);
    return;
  }
  const int rank = out.rank();
  // Strides of a and b aligned to out's dimensions (0 where broadcast).
  Shape sa(rank, 0), sb(rank, 0);
  auto align = [rank](const Shape& s, Shape& strides) {
    Shape rs = RowMajorStrides(s);
    const int off = rank - static_cast<int>(s.size());
    for (int i = 0; i < static_cast<int>(s.size()); ++i) strides[off + i] = s[i] == 1 ? 0 : rs[i];
  };
  align(a.shape, sa);
  align(b.shape, sb);
  if (rank == 0) {
    out.data[0] = f(a.data[0], b.data[0]);
    return;
  }
  const int64_t inner = out.shape[rank - 1];
  const int64_t ia = sa[rank - 1], ib = sb[rank - 1];
  Shape idx(rank, 0);
  int64_t oa = 0, ob = 0;
  for (int64_t o = 0; o < n; o += inner) {
    S* dst = out.data.data() + o;
    const S* pa = a.data.data() + oa;
    const S* pb = b.data.data() + ob;
    for (int64_t j = 0; j < inner; ++j) dst[j] = f(pa[j * ia], pb[j * ib]);
    for (int d = rank - 2; d >= 0; --d) {  // odometer over the outer dimensions
      oa += sa[d];
      ob += sb[d];
      if (++idx[d] < out.shape[d]) break;
      oa -= sa[d] * out.shape[d];
      ob -= sb[d] * out.shape[d];
      idx[d] = 0;
    }
  }
}

// An SMT form of one function applied to `params`, then to exactly `arity` inputs.
inline absl::StatusOr<SmtForm> SmtCall(absl::string_view op, int num_inputs, int arity, std::string function,
                                       std::vector<std::pair<std::string, ParamValue>> params = {}) {
  if (num_inputs != arity) return Bad(absl::StrCat(op, " with ", num_inputs, " inputs has no SMT encoding"));
  return SmtForm{{std::move(function)}, std::move(params)};
}

// The SMT form of an element-wise operator whose Fn names its function (kSmt), if any.
template <typename Fn>
absl::StatusOr<SmtForm> ElementwiseSmt(int num_inputs, int arity) {
  if constexpr (requires { Fn::kSmt; })
    return SmtCall(Fn::kName, num_inputs, arity, Fn::kSmt);
  else
    return Bad(absl::StrCat("operator ", Fn::kName, " has no SMT encoding"));
}

// A sliding window's parameters as rules state them: explicit pads as the padding mode
// they equal ("same": k/2 on every side of an odd kernel; "valid": none), without unit
// dilations or a ceil mode that changes nothing; nullopt when no mode is the same.
std::optional<Params> WindowRuleParams(const Params& p, int64_t kh, int64_t kw);

// A sliding window's parameters in the verifier's logic: strides and the padding mode.
// Explicit pads, dilations or ceil mode have no encoding there.
inline absl::StatusOr<std::vector<std::pair<std::string, ParamValue>>> WindowSmtParams(absl::string_view op,
                                                                                       const Params& p) {
  if (!p.Has("padding") || p.Has("pads") || p.Ints("dilations", {1, 1}) != std::vector<int64_t>{1, 1} ||
      p.Int("ceil_mode", 0) != 0)
    return Bad(absl::StrCat(op, " without a padding mode, or with dilations or ceil mode, has no SMT encoding"));
  return std::vector<std::pair<std::string, ParamValue>>{{"strides", p.Ints("strides", {1, 1})},
                                                         {"padding", p.Str("padding")}};
}

// Whether an element-wise node acts row by row (OpRuleForm::AtRowRank): some input a row
// tensor, and every other input the same for each row (all its dimensions but the last
// 1) at no higher rank than `to_rank`.
inline bool ElementwiseRowwise(absl::Span<const InputInfo> in, const std::vector<bool>& rows, int to_rank) {
  bool any = false;
  for (size_t i = 0; i < in.size(); ++i) {
    if (rows[i]) {
      any = true;
      continue;
    }
    if (!in[i].present) continue;
    const Shape& s = in[i].shape;
    if (static_cast<int>(s.size()) > to_rank) return false;
    for (size_t d = 0; d + 1 < s.size(); ++d)
      if (s[d] != 1) return false;
  }
  return any;
}

// A node acting along one axis of its row input 0 (a concatenation, a split, a softmax, a
// normalization), at `to_rank` when that axis is the last: `axis_param` (default
// `default_axis`) written as -1 stays so, else becomes the new last axis.
inline std::optional<Params> LastAxisAtRowRank(const Params& p, absl::Span<const InputInfo> in,
                                               const std::vector<bool>& rows, absl::string_view axis_param,
                                               int64_t default_axis, int to_rank) {
  if (in.empty() || !rows[0]) return std::nullopt;
  const int64_t axis = p.Int(axis_param, default_axis);
  const int64_t rank = static_cast<int64_t>(in[0].shape.size());
  if (axis != -1 && axis != rank - 1) return std::nullopt;
  if (axis == -1) return p;
  Params moved = p;
  moved.Set(std::string(axis_param), int64_t{to_rank - 1});
  return moved;
}

// An element-wise binary operator with broadcasting; Fn gives its name, ONNX type and
// scalar function (and kSmt, its function in the verifier's signature, if it has one).
template <typename Fn>
class BinaryOp : public KernelOp<BinaryOp<Fn>> {
 public:
  absl::string_view name() const override { return Fn::kName; }
  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params&, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 2, 2));
    RETURN_IF_ERROR(ExpectFloat(in[0], "A"));
    RETURN_IF_ERROR(ExpectFloat(in[1], "B"));
    ASSIGN_OR_RETURN(Shape s, BroadcastShapes(in[0].shape, in[1].shape));
    return std::vector<OutputType>{{DataType::kFloat32, s}};
  }
  DimSources DimensionSources(const Params&, absl::Span<const InputInfo> in,
                              absl::Span<const OutputType> out) const override {
    return ElementwiseSources(in, out);
  }
  std::optional<Params> AtRowRank(const Params& p, absl::Span<const InputInfo> in, const std::vector<bool>& rows,
                                  int to_rank) const override {
    if (!ElementwiseRowwise(in, rows, to_rank)) return std::nullopt;
    return p;
  }
  template <typename S>
  static absl::Status Compute(const Params&, KernelArgs<S>& a) {
    BroadcastBinary(*a.in[0], *a.in[1], *a.out[0], [](S x, S y) { return Fn::template Apply<S>(x, y); });
    return absl::OkStatus();
  }
  // Add and Mul by a constant of one value per channel (shaped [1,C,1,1] or [C,1,1]).
  std::optional<ChannelAffine> AsChannelAffine(const Params&, absl::Span<const InputInfo> in,
                                               size_t data) const override {
    constexpr bool shift = requires { Fn::kChannelShift; }
    , scale = requires { Fn::kChannelScale; };
    if constexpr (shift || scale) {
      const InputInfo& x = in[data];
      const TensorData* c = in[1 - data].constant;
      if (x.shape.size() != 4 || !c || c->dtype() != DataType::kFloat32) return std::nullopt;
      const int64_t channels = x.shape[1];
      if (c->shape() != Shape{1, channels, 1, 1} && c->shape() != Shape{channels, 1, 1}) return std::nullopt;
      ChannelAffine m{std::vector<float>(channels, 1.0f), std::vector<float>(channels, 0.0f)};
      auto& target = shift ? m.shift : m.scale;
      target.assign(c->floats().begin(), c->floats().end());
      return m;
    }
    return std::nullopt;
  }
  std::vector<GeneratorVariant> GeneratorVariants() const override {
    if (!Fn::kInGenerator) return {};
    GeneratorVariant v;
    v.arity = 2;
    v.commutative = true;
    v.same_shapes = true;
    return {v};
  }
  std::vector<std::string> onnx_op_types() const override { return {Fn::kOnnx}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override { return Params(); }
  absl::Status ToOnnx(const Params&, OnnxExportNode& e) const override {
    EmitSame(e, Fn::kOnnx);
    return absl::OkStatus();
  }
  absl::StatusOr<SmtForm> Smt(const Params&, int num_inputs, int) const override {
    return ElementwiseSmt<Fn>(num_inputs, 2);
  }
};

// An element-wise unary operator.
template <typename Fn>
class UnaryOp : public KernelOp<UnaryOp<Fn>> {
 public:
  absl::string_view name() const override { return Fn::kName; }
  absl::string_view AsConvActivation() const override {
    if constexpr (requires { Fn::kConvActivation; }) return Fn::kConvActivation;
    return {};
  }
  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params&, absl::Span<const InputInfo> in) const override {
    return LikeOneFloatInput(in, "X");
  }
  std::optional<Params> AtRowRank(const Params& p, absl::Span<const InputInfo> in, const std::vector<bool>& rows,
                                  int to_rank) const override {
    if (!ElementwiseRowwise(in, rows, to_rank)) return std::nullopt;
    return p;
  }
  template <typename S>
  static absl::Status Compute(const Params&, KernelArgs<S>& a) {
    const auto& x = a.in[0]->data;
    auto& y = a.out[0]->data;
    for (size_t i = 0; i < x.size(); ++i) y[i] = Fn::template Apply<S>(x[i]);
    return absl::OkStatus();
  }
  OpMetrics Metrics(const Params& p, absl::Span<const InputInfo> in, absl::Span<const OutputType> out) const override {
    OpMetrics m = OpDef::Metrics(p, in, out);
    m.flops *= Fn::kFlopsPerElement;
    return m;
  }
  DimSources DimensionSources(const Params&, absl::Span<const InputInfo> in,
                              absl::Span<const OutputType> out) const override {
    return ElementwiseSources(in, out);
  }
  std::vector<GeneratorVariant> GeneratorVariants() const override {
    if (!Fn::kInGenerator) return {};
    return {GeneratorVariant{}};
  }
  std::vector<std::string> onnx_op_types() const override { return {Fn::kOnnx}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode&) const override { return Params(); }
  absl::Status ToOnnx(const Params&, OnnxExportNode& e) const override {
    EmitSame(e, Fn::kOnnx);
    return absl::OkStatus();
  }
  absl::StatusOr<SmtForm> Smt(const Params&, int num_inputs, int) const override {
    return ElementwiseSmt<Fn>(num_inputs, 1);
  }
};

}  // namespace taso::ops

namespace taso::ops {

// The kernel of operators that only reinterpret or pass on their first input (Reshape,
// Flatten, Identity, Dropout at inference).
struct CopyFirstInput {
  template <typename S>
  static absl::Status Compute(const Params&, KernelArgs<S>& a) {
    a.out[0]->data.assign(a.in[0]->data.begin(), a.in[0]->data.end());
    return absl::OkStatus();
  }
};

}  // namespace taso::ops
