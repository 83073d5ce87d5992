// Conv2D on oneDNN: a direct convolution in the formats oneDNN prefers for these shapes
// (the cost of a convolution whose data is laid out for it), relu as a post-op, bias.
#include "backends/cpu_kernel.h"
#include "op_util.h"

namespace taso::ops {
namespace {

using dnnl::memory;

class ConvKernel : public cpu::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params& p, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType> out) const override {
    const Shape &x = in[0].shape, &w = in[1].shape, &y = out[0].shape;
    ASSIGN_OR_RETURN(Window2D win, ReadWindow(p, w[2], w[3]));
    const int64_t groups = x[1] / w[1];
    const auto any = memory::format_tag::any;
    const memory::desc src(cpu::Dims(x), memory::data_type::f32, any), dst(cpu::Dims(y), memory::data_type::f32, any);
    const memory::desc wei(groups == 1 ? cpu::Dims(w) : memory::dims{groups, w[0] / groups, w[1], w[2], w[3]},
                           memory::data_type::f32, any);
    const bool bias = in.size() == 3 && in[2].present;
    const memory::desc b({w[0]}, memory::data_type::f32, memory::format_tag::a);
    const memory::dims strides{win.sh, win.sw}, dil{win.dh - 1, win.dw - 1}, pl{win.pt, win.pl}, pr{win.pb, win.pr};
    auto desc = bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                       dnnl::algorithm::convolution_direct, src, wei, b, dst, strides,
                                                       dil, pl, pr)
                     : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                       dnnl::algorithm::convolution_direct, src, wei, dst, strides, dil,
                                                       pl, pr);
    dnnl::primitive_attr attr;
    if (p.Str("activation", "none") == "relu") {
      dnnl::post_ops ops;
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
      attr.set_post_ops(ops);
    }
    dnnl::convolution_forward::primitive_desc pd(desc, attr, cpu::Engine());
    auto run = std::make_unique<cpu::PrimitiveRun>();
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, cpu::PrimitiveRun::Buffer(pd.src_desc())},
                                            {DNNL_ARG_WEIGHTS, cpu::PrimitiveRun::Buffer(pd.weights_desc())},
                                            {DNNL_ARG_DST, cpu::PrimitiveRun::Buffer(pd.dst_desc())}};
    if (bias) args[DNNL_ARG_BIAS] = cpu::PrimitiveRun::Buffer(pd.bias_desc());
    run->Add(dnnl::convolution_forward(pd), std::move(args));
    return run;
  }
};

TASO_REGISTER_CPU_KERNEL("Conv2D", ConvKernel);

}  // namespace
}  // namespace taso::ops
