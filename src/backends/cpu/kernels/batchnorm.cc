// BatchNormalization (inference) on oneDNN: global statistics, scale and shift.
#include "backends/cpu/cpu_kernel.h"
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

class BatchNormKernel : public cpu::Kernel {
 public:
  std::vector<size_t> LayoutInputs(const Params&, absl::Span<const InputInfo>) const override { return {0}; }
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params& p, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType> out) const override {
    const Shape& x = in[0].shape;
    if (x.size() < 2 || x.size() > 5) return Bad("oneDNN batch normalization takes ranks 2 to 5");
    const dnnl::memory::desc data = cpu::Layout(x, p);
    const auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
                       dnnl::normalization_flags::use_shift;
    dnnl::batch_normalization_forward::primitive_desc pd(
        dnnl::batch_normalization_forward::desc(dnnl::prop_kind::forward_inference, data,
                                                static_cast<float>(p.Float("epsilon", 1e-5)), flags),
        cpu::Engine());
    auto run = std::make_unique<cpu::PrimitiveRun>();
    const Shape channels{x[1]};
    const dnnl::memory::desc per_channel = cpu::Plain(channels);
    run->Add(dnnl::batch_normalization_forward(pd), {{DNNL_ARG_SRC, run->Input(0, data, data)},
                                                     {DNNL_ARG_SCALE, run->Input(1, channels, per_channel)},
                                                     {DNNL_ARG_SHIFT, run->Input(2, channels, per_channel)},
                                                     {DNNL_ARG_MEAN, run->Input(3, channels, per_channel)},
                                                     {DNNL_ARG_VARIANCE, run->Input(4, channels, per_channel)},
                                                     {DNNL_ARG_DST, run->Output(0, data, data)}});
    return run;
  }
};

TASO_REGISTER_CPU_KERNEL(op_names::kBatchNormalization, BatchNormKernel);

}  // namespace
}  // namespace taso::ops
