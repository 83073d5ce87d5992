// MatMul: batched matrix multiplication, [..., M, K] x [..., K, N] -> [..., M, N], with
// the batch dimensions broadcast as ONNX (numpy) does.
#include "taso/ir/ops/matmul.h"
#include "taso/ir/ops/names.h"

#include "dense_product.h"
#include "op_util.h"

namespace taso::ops {
namespace {

absl::StatusOr<Shape> OutputShape(const Shape& a, const Shape& b) {
  if (a.size() < 2 || b.size() < 2)
    return Bad(absl::StrCat("operands must have rank 2 or more, got ", ShapeToString(a), " and ", ShapeToString(b)));
  const int64_t m = a[a.size() - 2], k = a.back(), kb = b[b.size() - 2], n = b.back();
  if (k != kb) return Bad(absl::StrCat("inner dimensions differ: ", ShapeToString(a), " x ", ShapeToString(b)));
  ASSIGN_OR_RETURN(Shape batch,
                   BroadcastShapes(absl::MakeSpan(a.data(), a.size() - 2), absl::MakeSpan(b.data(), b.size() - 2)));
  batch.push_back(m);
  batch.push_back(n);
  return batch;
}

// Offset of batch index `b` (over out's batch dims) into an operand with broadcasting.
int64_t BatchOffset(int64_t b, const Shape& out, const Shape& operand) {
  const int out_batch = static_cast<int>(out.size()) - 2;
  const int op_batch = static_cast<int>(operand.size()) - 2;
  const int64_t mat = operand[operand.size() - 2] * operand.back();
  int64_t offset = 0, stride = mat;
  for (int d = out_batch - 1; d >= 0; --d) {
    const int64_t idx = b % out[d];
    b /= out[d];
    const int od = d - (out_batch - op_batch);
    if (od < 0) continue;
    if (operand[od] != 1) offset += idx * stride;
    stride *= operand[od];
  }
  return offset;
}

class MatMul : public KernelOp<MatMul> {
 public:
  absl::string_view name() const override { return op_names::kMatMul; }

  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params&, absl::Span<const InputInfo> in) const override {
    RETURN_IF_ERROR(ExpectInputs(in, 2, 2));
    RETURN_IF_ERROR(ExpectFloat(in[0], "A"));
    RETURN_IF_ERROR(ExpectFloat(in[1], "B"));
    ASSIGN_OR_RETURN(Shape s, OutputShape(in[0].shape, in[1].shape));
    return std::vector<OutputType>{{DataType::kFloat32, s}};
  }

  std::optional<Params> AtRowRank(const Params& p, absl::Span<const InputInfo> in, const std::vector<bool>& rows,
                                  int to_rank) const override {
    // A product of rows by a matrix; a product of two activations keeps its own form.
    if (in.size() != 2 || !rows[0] || rows[1] || in[1].shape.size() != 2) return std::nullopt;
    return p;
  }

  template <typename S>
  static absl::Status Compute(const Params&, KernelArgs<S>& args) {
    const TensorView<S>& a = *args.in[0];
    const TensorView<S>& b = *args.in[1];
    Tensor<S>& c = *args.out[0];
    const int64_t m = a.shape[a.rank() - 2], k = a.shape.back(), n = b.shape.back();
    const int64_t batches = m * n == 0 ? 0 : c.numel() / (m * n);
    MultiplyDenseBatches<S>(batches, m, k, n, [&](int64_t bi) {
      return std::tuple<const S*, const S*, S*>(a.data.data() + BatchOffset(bi, c.shape, a.shape),
                                                b.data.data() + BatchOffset(bi, c.shape, b.shape),
                                                c.data.data() + bi * m * n);
    });
    return absl::OkStatus();
  }

  OpMetrics Metrics(const Params& p, absl::Span<const InputInfo> in, absl::Span<const OutputType> out) const override {
    OpMetrics m = OpDef::Metrics(p, in, out);
    m.flops = 2.0 * static_cast<double>(NumElements(out[0].shape)) * static_cast<double>(in[0].shape.back());
    return m;
  }

  DimSources DimensionSources(const Params&, absl::Span<const InputInfo> in,
                              absl::Span<const OutputType> out) const override {
    DimSources d = ElementwiseSources(in, out);  // the batch dimensions
    const int r = static_cast<int>(out[0].shape.size());
    d[0][r - 2] = DimSource::Copy(0, static_cast<int>(in[0].shape.size()) - 2);
    d[0][r - 1] = DimSource::Copy(1, static_cast<int>(in[1].shape.size()) - 1);
    return d;
  }

  std::vector<GeneratorVariant> GeneratorVariants() const override { return {GeneratorVariant{.arity = 2, .rank = 2}}; }
  std::vector<std::string> onnx_op_types() const override { return {"MatMul"}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override {
    for (const InputInfo& i : node.inputs())
      if (i.shape.size() < 2) return std::nullopt;  // 1-D operands keep ONNX's own rules: opaque
    return Params();
  }
  absl::Status ToOnnx(const Params&, OnnxExportNode& e) const override {
    EmitSame(e, "MatMul");
    return absl::OkStatus();
  }
  absl::StatusOr<SmtForm> Smt(const Params&, int num_inputs, int) const override {
    return SmtCall(name(), num_inputs, 2, "matmul");
  }
};

TASO_REGISTER_OP(MatMul);

}  // namespace

const OpDef& MatMulOp() {
  static const OpDef* op = OpRegistry::Global().Find(MatMul().name());
  return *op;
}

}  // namespace taso::ops
