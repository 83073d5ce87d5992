// Concat on oneDNN.
#include "backends/cpu_kernel.h"
#include "op_util.h"

namespace taso::ops {
namespace {

class ConcatKernel : public cpu::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params& p, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType> out) const override {
    ASSIGN_OR_RETURN(int axis, NormalizeAxis(p.Int("axis", 0), static_cast<int>(out[0].shape.size())));
    std::vector<dnnl::memory::desc> srcs;
    for (const InputInfo& i : in) srcs.push_back(cpu::Plain(i.shape));
    dnnl::concat::primitive_desc pd(cpu::Plain(out[0].shape), axis, srcs, cpu::Engine());
    auto run = std::make_unique<cpu::PrimitiveRun>();
    std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_DST, run->Output(0, out[0].shape, pd.dst_desc())}};
    for (size_t i = 0; i < srcs.size(); ++i)
      args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = run->Input(i, in[i].shape, srcs[i]);
    run->Add(dnnl::concat(pd), std::move(args));
    return run;
  }
};

TASO_REGISTER_CPU_KERNEL("Concat", ConcatKernel);

}  // namespace
}  // namespace taso::ops
