// MobileNetV3's piecewise-linear activations, element-wise:
//   HardSigmoid: max(0, min(1, alpha * x + beta));
//   HardSwish:   x * max(0, min(1, x / 6 + 1 / 2)).
// Floats only: they are in no rule, so they are never fingerprinted or verified.
#include <algorithm>

#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

template <typename Fn>
class HardActivation : public KernelOp<HardActivation<Fn>> {
 public:
  absl::string_view name() const override { return Fn::kName; }
  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params&, absl::Span<const InputInfo> in) const override {
    return LikeOneFloatInput(in, "X");
  }
  std::optional<Params> AtRowRank(const Params& p, absl::Span<const InputInfo> in, const std::vector<bool>& rows,
                                  int to_rank) const override {
    if (!ElementwiseRowwise(in, rows, to_rank)) return std::nullopt;
    return p;
  }

  template <typename S>
  static absl::Status Compute(const Params& p, KernelArgs<S>& a) {
    if constexpr (!std::is_same_v<S, float>) {
      return absl::UnimplementedError(absl::StrCat(Fn::kName, " runs on floats only"));
    } else {
      const Fn fn(p);
      const auto& x = a.in[0]->data;
      auto& y = a.out[0]->data;
      for (size_t i = 0; i < x.size(); ++i) y[i] = fn(x[i]);
      return absl::OkStatus();
    }
  }
  DimSources DimensionSources(const Params&, absl::Span<const InputInfo> in,
                              absl::Span<const OutputType> out) const override {
    return ElementwiseSources(in, out);
  }
  std::vector<std::string> onnx_op_types() const override { return {Fn::kName}; }
  absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const override { return Fn::Import(node); }
  absl::Status ToOnnx(const Params& p, OnnxExportNode& e) const override {
    Fn::Export(p, EmitSame(e, Fn::kName));
    return absl::OkStatus();
  }
};

struct HardSigmoidFn {
  static constexpr const char* kName = op_names::kHardSigmoid;
  explicit HardSigmoidFn(const Params& p)
      : alpha(static_cast<float>(p.Float("alpha", 0.2))), beta(static_cast<float>(p.Float("beta", 0.5))) {}
  float operator()(float x) const { return std::clamp(alpha * x + beta, 0.0f, 1.0f); }
  static Params Import(OnnxImportNode& node) {
    return Params().Set("alpha", node.Float("alpha", 0.2)).Set("beta", node.Float("beta", 0.5));
  }
  static void Export(const Params& p, onnx::NodeProto* n) {
    OnnxExportNode::SetFloat(n, "alpha", p.Float("alpha", 0.2));
    OnnxExportNode::SetFloat(n, "beta", p.Float("beta", 0.5));
  }
  float alpha, beta;
};

struct HardSwishFn {
  static constexpr const char* kName = op_names::kHardSwish;
  explicit HardSwishFn(const Params&) {}
  float operator()(float x) const { return x * std::clamp(x / 6.0f + 0.5f, 0.0f, 1.0f); }
  static Params Import(OnnxImportNode&) { return Params(); }
  static void Export(const Params&, onnx::NodeProto*) {}
};

TASO_REGISTER_OP(HardActivation<HardSigmoidFn>);
TASO_REGISTER_OP(HardActivation<HardSwishFn>);

}  // namespace
}  // namespace taso::ops
