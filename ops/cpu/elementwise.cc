// Element-wise operators on oneDNN: relu (eltwise), add and mul (binary, with numpy
// broadcasting), scalar mul (binary against a one-element tensor).
#include "backends/cpu_kernel.h"
#include "op_util.h"

namespace taso::ops {
namespace {

class ReluKernel : public cpu::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params&, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType>) const override {
    const dnnl::memory::desc md = cpu::Plain(in[0].shape);
    dnnl::eltwise_forward::primitive_desc pd(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::eltwise_relu, md, 0.0f, 0.0f),
        cpu::Engine());
    auto run = std::make_unique<cpu::PrimitiveRun>();
    run->Add(dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, run->Input(0, in[0].shape, md)},
                                         {DNNL_ARG_DST, run->Output(0, in[0].shape, md)}});
    return run;
  }
};

// oneDNN broadcasts a source of the destination's rank: lower ranks get leading ones.
Shape ToRank(const Shape& s, size_t rank) {
  Shape out(rank - std::min(rank, s.size()), 1);
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

class BinaryKernel : public cpu::Kernel {
 public:
  explicit BinaryKernel(dnnl::algorithm algo) : algo_(algo) {}
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params&, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType> out) const override {
    const size_t rank = std::max<size_t>(1, out[0].shape.size());
    const Shape sa = ToRank(in[0].shape, rank), sb = ToRank(in[1].shape, rank), sc = ToRank(out[0].shape, rank);
    const dnnl::memory::desc a = cpu::Plain(sa), b = cpu::Plain(sb), c = cpu::Plain(sc);
    dnnl::binary::primitive_desc pd(dnnl::binary::desc(algo_, a, b, c), cpu::Engine());
    auto run = std::make_unique<cpu::PrimitiveRun>();
    run->Add(dnnl::binary(pd), {{DNNL_ARG_SRC_0, run->Input(0, sa, a)},
                                {DNNL_ARG_SRC_1, run->Input(1, sb, b)},
                                {DNNL_ARG_DST, run->Output(0, sc, c)}});
    return run;
  }

 private:
  dnnl::algorithm algo_;
};

struct AddKernel : BinaryKernel {
  AddKernel() : BinaryKernel(dnnl::algorithm::binary_add) {}
};
struct MulKernel : BinaryKernel {
  MulKernel() : BinaryKernel(dnnl::algorithm::binary_mul) {}
};
TASO_REGISTER_CPU_KERNEL("Relu", ReluKernel);
TASO_REGISTER_CPU_KERNEL("Add", AddKernel);
TASO_REGISTER_CPU_KERNEL("Mul", MulKernel);
TASO_REGISTER_CPU_KERNEL("ScalarMul", MulKernel);

}  // namespace
}  // namespace taso::ops
