// The sliding-window loop shared by MaxPool, AveragePool and GlobalAveragePool.
#pragma once

#include "op_util.h"

namespace taso::ops {

absl::StatusOr<std::vector<OutputType>> PoolTypes(const Params& p, absl::Span<const InputInfo> in);

// taso-gen's pooling choices: 3x3 windows, strides 1 and 2, same and valid padding.
std::vector<GeneratorVariant> PoolGeneratorVariants(const Params& extra);

// Reads the attributes MaxPool and AveragePool share (kernel, window, ceil_mode) into
// params; false when the node uses something the library does not represent.
absl::StatusOr<bool> ReadOnnxPool(OnnxImportNode& node, Params& params);

// MaxPool and AveragePool in the verifier's logic: function(kernel, stride, padding, x).
absl::StatusOr<SmtForm> PoolSmt(absl::string_view op, const char* function, const Params& p, int num_inputs);

// What MaxPool and AveragePool share: shape rule, work, dimension sources.
template <typename Impl>
class PoolOp : public KernelOp<Impl> {
 public:
  absl::StatusOr<std::vector<OutputType>> InferTypes(const Params& p, absl::Span<const InputInfo> in) const override {
    return PoolTypes(p, in);
  }
  OpMetrics Metrics(const Params& p, absl::Span<const InputInfo> in, absl::Span<const OutputType> out) const override {
    OpMetrics m = OpDef::Metrics(p, in, out);
    auto k = p.Ints("kernel");
    m.flops *= static_cast<double>(k[0] * k[1]);
    return m;
  }
  std::optional<Params> RuleParams(const Params& p, absl::Span<const InputInfo>) const override {
    auto k = p.Ints("kernel");
    if (k.size() != 2) return std::nullopt;
    return WindowRuleParams(p, k[0], k[1]);
  }
  std::optional<Params> CanonicalParams(const Params& p, absl::Span<const InputInfo>) const override {
    auto k = p.Ints("kernel");
    if (k.size() != 2) return std::nullopt;
    auto w = ReadWindow(p, k[0], k[1]);
    if (!w.ok()) return std::nullopt;
    return CanonicalWindowParams(p, *w).Set("ceil_mode", int64_t{w->ceil_mode});
  }
  DimSources DimensionSources(const Params& p, absl::Span<const InputInfo>,
                              absl::Span<const OutputType>) const override {
    auto k = p.Ints("kernel");
    auto w = ReadWindow(p, k[0], k[1]);
    return w.ok() ? WindowSources(*w, 0, 1) : DimSources{std::vector<DimSource>(4)};
  }
};

// For every output position: folds the in-bounds input values with `step` starting from
// `init`, then writes finish(acc, in_bounds_count, window_count_clipped_to_pads).
template <typename S, typename Step, typename Finish>
void Pool2D(const std::type_identity_t<TensorView<S>>& x, Tensor<S>& y, const Window2D& w, S init, Step step,
            Finish finish) {
  const int64_t nc = x.shape[0] * x.shape[1], h = x.shape[2], wd = x.shape[3];
  const int64_t oh = y.shape[2], ow = y.shape[3];
  for (int64_t plane = 0; plane < nc; ++plane) {
    const S* in = x.data.data() + plane * h * wd;
    S* out = y.data.data() + plane * oh * ow;
    for (int64_t oy = 0; oy < oh; ++oy) {
      for (int64_t ox = 0; ox < ow; ++ox) {
        S acc = init;
        int64_t inside = 0, padded = 0;
        for (int64_t ky = 0; ky < w.kh; ++ky) {
          const int64_t iy = oy * w.sh - w.pt + ky * w.dh;
          if (iy >= h + w.pb) continue;  // beyond the padding (ceil mode)
          for (int64_t kx = 0; kx < w.kw; ++kx) {
            const int64_t ix = ox * w.sw - w.pl + kx * w.dw;
            if (ix >= wd + w.pr) continue;
            ++padded;
            if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
            acc = step(acc, in[iy * wd + ix]);
            ++inside;
          }
        }
        out[oy * ow + ox] = finish(acc, inside, padded);
      }
    }
  }
}

}  // namespace taso::ops
