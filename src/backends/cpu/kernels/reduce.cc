// Softmax, ReduceMean and GlobalAveragePool on oneDNN (softmax and reduction primitives).
#include "backends/cpu/cpu_kernel.h"
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

class SoftmaxKernel : public cpu::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params& p, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType>) const override {
    const Shape& x = in[0].shape;
    ASSIGN_OR_RETURN(int axis, NormalizeAxis(p.Int("axis", -1), static_cast<int>(x.size())));
    const dnnl::memory::desc md = cpu::Plain(x);
    dnnl::softmax_forward::primitive_desc pd(dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, md, axis),
                                             cpu::Engine());
    auto run = std::make_unique<cpu::PrimitiveRun>();
    run->Add(dnnl::softmax_forward(pd), {{DNNL_ARG_SRC, run->Input(0, x, md)}, {DNNL_ARG_DST, run->Output(0, x, md)}});
    return run;
  }
};

// A mean over the dimensions where the output (with kept dimensions) has size 1.
absl::StatusOr<std::unique_ptr<cpu::Prepared>> Mean(const Shape& x, const Shape& kept) {
  if (x.size() != kept.size()) return Bad("a mean's kept shape has the input's rank");
  const dnnl::memory::desc src = cpu::Plain(x), dst = cpu::Plain(kept);
  dnnl::reduction::primitive_desc pd(dnnl::reduction::desc(dnnl::algorithm::reduction_mean, src, dst, 0.0f, 0.0f),
                                     cpu::Engine());
  auto run = std::make_unique<cpu::PrimitiveRun>();
  run->Add(dnnl::reduction(pd), {{DNNL_ARG_SRC, run->Input(0, x, src)}, {DNNL_ARG_DST, run->Output(0, kept, dst)}});
  return run;
}

class ReduceMeanKernel : public cpu::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params& p, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType>) const override {
    const Shape& x = in[0].shape;
    Shape kept = x;
    std::vector<int64_t> axes = p.Ints("axes");
    if (axes.empty())
      for (size_t d = 0; d < x.size(); ++d) axes.push_back(static_cast<int64_t>(d));
    for (int64_t a : axes) {
      ASSIGN_OR_RETURN(int axis, NormalizeAxis(a, static_cast<int>(x.size())));
      kept[axis] = 1;
    }
    return Mean(x, kept);  // without keepdims the output has the same bytes
  }
};

class GlobalAveragePoolKernel : public cpu::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params&, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType> out) const override {
    return Mean(in[0].shape, out[0].shape);
  }
};

TASO_REGISTER_CPU_KERNEL(op_names::kSoftmax, SoftmaxKernel);
TASO_REGISTER_CPU_KERNEL(op_names::kReduceMean, ReduceMeanKernel);
TASO_REGISTER_CPU_KERNEL(op_names::kGlobalAveragePool, GlobalAveragePoolKernel);

}  // namespace
}  // namespace taso::ops
