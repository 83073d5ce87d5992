// MaxPool: 2-D max pooling with kernel, strides, explicit pads, dilations and ceil mode.
#include "pool_util.h"

namespace taso::ops {
namespace {

class MaxPool : public KernelOp<MaxPool> {
 public:
  absl::string_view name() const override { return "MaxPool"; }
  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params& p, absl::Span<const InputInfo> in) const override {
    return PoolTypes(p, in);
  }
  template <typename S>
  static absl::Status Compute(const Params& p, KernelArgs<S>& a) {
    auto k = p.Ints("kernel");
    ASSIGN_OR_RETURN(Window2D w, ReadWindow(p, k[0], k[1]));
    Pool2D<S>(*a.in[0], *a.out[0], w, Domain<S>::Lowest(), [](S acc, S v) { return Domain<S>::Max(acc, v); },
              [](S acc, int64_t, int64_t) { return acc; });
    return absl::OkStatus();
  }
  OpMetrics Metrics(const Params& p, absl::Span<const InputInfo> in, absl::Span<const OutputType> out) const override {
    OpMetrics m = OpDef::Metrics(p, in, out);
    auto k = p.Ints("kernel");
    m.flops *= static_cast<double>(k[0] * k[1]);
    return m;
  }
  DimSources DimensionSources(const Params& p, absl::Span<const InputInfo>,
                              absl::Span<const OutputType>) const override {
    auto k = p.Ints("kernel");
    auto w = ReadWindow(p, k[0], k[1]);
    return w.ok() ? WindowSources(*w, 0, 1) : DimSources{std::vector<DimSource>(4)};
  }
  std::vector<GeneratorVariant> GeneratorVariants() const override { return PoolGeneratorVariants({}); }
  std::vector<std::string> onnx_op_types() const override { return {"MaxPool"}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override {
    auto ks = node.Ints("kernel_shape");
    if (ks.size() != 2 || node.Int("storage_order", 0) != 0) return std::nullopt;
    Params p;
    ASSIGN_OR_RETURN(bool ok, ReadOnnxWindow(node, node.inputs()[0].shape, ks[0], ks[1], p));
    if (!ok) return std::nullopt;
    p.Set("kernel", ks).Set("ceil_mode", node.Int("ceil_mode", 0));
    return p;
  }
  absl::Status ToOnnx(const Params& p, OnnxExportNode& e) const override {
    onnx::NodeProto* n = EmitSame(e, "MaxPool");
    WriteOnnxWindow(p, n, p.Ints("kernel")[0], p.Ints("kernel")[1]);
    OnnxExportNode::SetInts(n, "dilations", p.Ints("dilations", {1, 1}));
    OnnxExportNode::SetInt(n, "ceil_mode", p.Int("ceil_mode", 0));
    return absl::OkStatus();
  }
};

TASO_REGISTER_OP(MaxPool);

}  // namespace
}  // namespace taso::ops
