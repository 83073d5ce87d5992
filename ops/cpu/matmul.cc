// MatMul on oneDNN (2-D, or batched with equal batch dimensions).
#include "backends/cpu_kernel.h"
#include "op_util.h"

namespace taso::ops {
namespace {

class MatMulKernel : public cpu::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params&, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType> out) const override {
    const Shape &a = in[0].shape, &b = in[1].shape, &c = out[0].shape;
    if (a.size() < 2 || a.size() != b.size() || a.size() != c.size())
      return Bad("oneDNN matmul here takes operands of one rank, at least 2");
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(cpu::Plain(a), cpu::Plain(b), cpu::Plain(c)), cpu::Engine());
    auto run = std::make_unique<cpu::PrimitiveRun>();
    run->Add(dnnl::matmul(pd), {{DNNL_ARG_SRC, run->Input(0, a, pd.src_desc())},
                                {DNNL_ARG_WEIGHTS, run->Input(1, b, pd.weights_desc())},
                                {DNNL_ARG_DST, run->Output(0, c, pd.dst_desc())}});
    return run;
  }
};

TASO_REGISTER_CPU_KERNEL("MatMul", MatMulKernel);

}  // namespace
}  // namespace taso::ops
