// Conv2D on oneDNN, with bias, and relu as a post-op; after a gemm-based convolution the
// relu is an eltwise primitive run in place instead, because oneDNN 2.6 applies a gemm
// convolution's post-ops in a slow scalar loop. Inputs and outputs are plain NCHW: a dense
// convolution reads them as they are (oneDNN's gemm-based convolution); a grouped or
// depthwise one runs in the blocked layout oneDNN prefers, with the reorders into and out
// of it part of its run (on depthwise layers that is faster than a gemm per group).
#include "backends/cpu/cpu_kernel.h"
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

using dnnl::memory;

class ConvKernel : public cpu::Kernel {
 public:
  // The weights are rearranged into the layout the convolution reads once, at Setup.
  bool NeedsConstant(size_t input) const override { return input == 1; }
  bool ReadsWeight(size_t input, absl::Span<const InputInfo>) const override { return input >= 1; }  // kernel, bias
  std::vector<size_t> LayoutInputs(const Params&, absl::Span<const InputInfo>) const override { return {0}; }
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params& p, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType> out) const override {
    const Shape &x = in[0].shape, &w = in[1].shape, &y = out[0].shape;
    ASSIGN_OR_RETURN(Window2D win, ReadWindow(p, w[2], w[3]));
    const int64_t groups = x[1] / w[1];
    const auto any = memory::format_tag::any;
    // Blocked nodes read and write the blocked layout; plain grouped ones reorder into
    // the layout oneDNN picks.
    const bool blocked = cpu::IsBlocked(p), grouped = groups > 1;
    const memory::desc src_port = cpu::Layout(x, p), dst_port = cpu::Layout(y, p);
    const memory::desc src = grouped && !blocked ? memory::desc(cpu::Dims(x), memory::data_type::f32, any) : src_port;
    const memory::desc dst = grouped && !blocked ? memory::desc(cpu::Dims(y), memory::data_type::f32, any) : dst_port;
    // Grouped weights are 5-D to oneDNN (groups first): the same bytes as OIHW.
    const Shape wei_shape = groups == 1 ? w : Shape{groups, w[0] / groups, w[1], w[2], w[3]};
    const memory::desc wei(cpu::Dims(wei_shape), memory::data_type::f32, any);
    const bool bias = in.size() == 3 && in[2].present;
    const memory::desc b({w[0]}, memory::data_type::f32, memory::format_tag::a);
    const memory::dims strides{win.sh, win.sw}, dil{win.dh - 1, win.dw - 1}, pl{win.pt, win.pl}, pr{win.pb, win.pr};
    auto desc =
        bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                               src, wei, b, dst, strides, dil, pl, pr)
             : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                               src, wei, dst, strides, dil, pl, pr);
    const bool relu = p.Str("activation", "none") == "relu";
    dnnl::primitive_attr attr;
    if (relu) {
      dnnl::post_ops ops;
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
      attr.set_post_ops(ops);
    }
    dnnl::convolution_forward::primitive_desc pd(desc, attr, cpu::Engine());
    const bool separate_relu =
        relu && std::string(pd.impl_info_str()).find("gemm") != std::string::npos && pd.dst_desc() == dst_port;
    if (separate_relu) pd = dnnl::convolution_forward::primitive_desc(desc, cpu::Engine());
    auto run = std::make_unique<cpu::PrimitiveRun>();
    const memory dst_memory = run->Output(0, dst_port, pd.dst_desc());
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, run->Input(0, src_port, pd.src_desc())},
        {DNNL_ARG_WEIGHTS, run->Input(1, wei_shape, pd.weights_desc(), /*constant=*/true)},
        {DNNL_ARG_DST, dst_memory}};
    if (bias) args[DNNL_ARG_BIAS] = run->Input(2, in[2].shape, pd.bias_desc());
    run->Add(dnnl::convolution_forward(pd), std::move(args));
    if (separate_relu) {
      dnnl::eltwise_forward::primitive_desc relu_pd(
          {dnnl::prop_kind::forward_inference, dnnl::algorithm::eltwise_relu, dst_port, 0.0f, 0.0f}, cpu::Engine());
      run->Add(dnnl::eltwise_forward(relu_pd), {{DNNL_ARG_SRC, dst_memory}, {DNNL_ARG_DST, dst_memory}});
    }
    return run;
  }
};

TASO_REGISTER_CPU_KERNEL(op_names::kConv2D, ConvKernel);

}  // namespace
}  // namespace taso::ops
