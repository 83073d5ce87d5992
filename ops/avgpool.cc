// AveragePool: 2-D average pooling; count_include_pad chooses whether padded positions
// count in the divisor (TASO's pooling-as-convolution identity needs them counted).
#include "pool_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

class AveragePool : public PoolOp<AveragePool> {
 public:
  absl::string_view name() const override { return op_names::kAveragePool; }
  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params& p, absl::Span<const InputInfo> in) const override {
    if (p.Ints("dilations", {1, 1}) != std::vector<int64_t>{1, 1}) return Bad("average pooling has no dilations");
    return PoolOp::InferTypes(p, in);
  }
  template <typename S>
  static absl::Status Compute(const Params& p, KernelArgs<S>& a) {
    auto k = p.Ints("kernel");
    ASSIGN_OR_RETURN(Window2D w, ReadWindow(p, k[0], k[1]));
    const bool include_pad = p.Int("count_include_pad", 0) != 0;
    Pool2D<S>(
        *a.in[0], *a.out[0], w, Domain<S>::Zero(), [](S acc, S v) { return acc + v; },
        [include_pad](S acc, int64_t inside, int64_t padded) {
          return acc * Domain<S>::InverseCount(include_pad ? padded : inside);
        });
    return absl::OkStatus();
  }
  // Counting padding, so pooling equals a depth-wise convolution with C_pool.
  std::vector<GeneratorVariant> GeneratorVariants() const override {
    return PoolGeneratorVariants(Params().Set("count_include_pad", int64_t{1}));
  }
  std::vector<std::string> onnx_op_types() const override { return {"AveragePool"}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override {
    Params p;
    ASSIGN_OR_RETURN(bool ok, ReadOnnxPool(node, p));
    if (!ok || p.Ints("dilations") != std::vector<int64_t>{1, 1}) return std::nullopt;
    p.Erase("dilations");
    p.Set("count_include_pad", node.Int("count_include_pad", 0));
    return p;
  }
  absl::Status ToOnnx(const Params& p, OnnxExportNode& e) const override {
    onnx::NodeProto* n = EmitSame(e, "AveragePool");
    WriteOnnxWindow(p, n, p.Ints("kernel")[0], p.Ints("kernel")[1]);
    OnnxExportNode::SetInt(n, "ceil_mode", p.Int("ceil_mode", 0));
    OnnxExportNode::SetInt(n, "count_include_pad", p.Int("count_include_pad", 0));
    return absl::OkStatus();
  }
  // The axioms are about pooling that counts padded positions.
  absl::StatusOr<SmtForm> Smt(const Params& p, int num_inputs, int) const override {
    if (p.Int("count_include_pad", 0) != 1) return Bad("only AveragePool counting padding has an SMT encoding");
    return PoolSmt(name(), "poolavg", p, num_inputs);
  }
};

TASO_REGISTER_OP(AveragePool);

}  // namespace
}  // namespace taso::ops
