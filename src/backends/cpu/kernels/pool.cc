// MaxPool and AveragePool on oneDNN.
#include "backends/cpu/cpu_kernel.h"
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

// Max pooling when kMax, else average pooling.
template <bool kMax>
class PoolKernel : public cpu::Kernel {
 public:
  std::vector<size_t> LayoutInputs(const Params&, absl::Span<const InputInfo>) const override { return {0}; }
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params& p, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType> out) const override {
    const auto k = p.Ints("kernel");
    ASSIGN_OR_RETURN(Window2D w, ReadWindow(p, k[0], k[1]));
    if (w.dh != 1 || w.dw != 1) return Bad("oneDNN pooling here has no dilations");
    const auto algo = kMax ? dnnl::algorithm::pooling_max
                           : (p.Int("count_include_pad", 0) ? dnnl::algorithm::pooling_avg_include_padding
                                                            : dnnl::algorithm::pooling_avg_exclude_padding);
    const dnnl::memory::desc src = cpu::Layout(in[0].shape, p), dst = cpu::Layout(out[0].shape, p);
    // In ceil mode, windows past the input are more right padding to oneDNN.
    const int64_t pb = w.ceil_mode ? (out[0].shape[2] - 1) * w.sh + w.kh - in[0].shape[2] - w.pt : w.pb;
    const int64_t pr = w.ceil_mode ? (out[0].shape[3] - 1) * w.sw + w.kw - in[0].shape[3] - w.pl : w.pr;
    dnnl::pooling_forward::desc desc(dnnl::prop_kind::forward_inference, algo, src, dst, {w.sh, w.sw}, {w.kh, w.kw},
                                     {w.pt, w.pl}, {std::max<int64_t>(0, pb), std::max<int64_t>(0, pr)});
    dnnl::pooling_forward::primitive_desc pd(desc, cpu::Engine());
    auto run = std::make_unique<cpu::PrimitiveRun>();
    run->Add(dnnl::pooling_forward(pd),
             {{DNNL_ARG_SRC, run->Input(0, src, pd.src_desc())}, {DNNL_ARG_DST, run->Output(0, dst, pd.dst_desc())}});
    return run;
  }
};
TASO_REGISTER_CPU_KERNEL(op_names::kMaxPool, PoolKernel<true>);
TASO_REGISTER_CPU_KERNEL(op_names::kAveragePool, PoolKernel<false>);

}  // namespace
}  // namespace taso::ops
