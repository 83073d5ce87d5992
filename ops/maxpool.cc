// MaxPool: 2-D max pooling with kernel, strides, explicit pads, dilations and ceil mode.
#include "pool_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

class MaxPool : public PoolOp<MaxPool> {
 public:
  absl::string_view name() const override { return op_names::kMaxPool; }
  template <typename S>
  static absl::Status Compute(const Params& p, KernelArgs<S>& a) {
    auto k = p.Ints("kernel");
    ASSIGN_OR_RETURN(Window2D w, ReadWindow(p, k[0], k[1]));
    Pool2D<S>(
        *a.in[0], *a.out[0], w, Domain<S>::Lowest(), [](S acc, S v) { return Domain<S>::Max(acc, v); },
        [](S acc, int64_t, int64_t) { return acc; });
    return absl::OkStatus();
  }
  std::vector<GeneratorVariant> GeneratorVariants() const override { return PoolGeneratorVariants({}); }
  std::vector<std::string> onnx_op_types() const override { return {"MaxPool"}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override {
    if (node.Int("storage_order", 0) != 0) return std::nullopt;
    Params p;
    ASSIGN_OR_RETURN(bool ok, ReadOnnxPool(node, p));
    if (!ok) return std::nullopt;
    return p;
  }
  absl::Status ToOnnx(const Params& p, OnnxExportNode& e) const override {
    onnx::NodeProto* n = EmitSame(e, "MaxPool");
    WriteOnnxWindow(p, n, p.Ints("kernel")[0], p.Ints("kernel")[1]);
    OnnxExportNode::SetInts(n, "dilations", p.Ints("dilations", {1, 1}));
    OnnxExportNode::SetInt(n, "ceil_mode", p.Int("ceil_mode", 0));
    return absl::OkStatus();
  }
  absl::StatusOr<SmtForm> Smt(const Params& p, int num_inputs, int) const override {
    return PoolSmt(name(), "poolmax", p, num_inputs);
  }
};

TASO_REGISTER_OP(MaxPool);

}  // namespace
}  // namespace taso::ops
