// Concat on oneDNN.
#include "backends/cpu/cpu_kernel.h"
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

class ConcatKernel : public cpu::Kernel {
 public:
  // Blocked along the channels, when every piece is a whole number of blocks.
  std::vector<size_t> LayoutInputs(const Params& p, absl::Span<const InputInfo> in) const override {
    if (p.Int("axis", 0) != 1) return {};
    std::vector<size_t> all;
    for (size_t i = 0; i < in.size(); ++i) {
      if (!cpu::Blockable(in[i].shape)) return {};
      all.push_back(i);
    }
    return all;
  }
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params& p, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType> out) const override {
    ASSIGN_OR_RETURN(int axis, NormalizeAxis(p.Int("axis", 0), static_cast<int>(out[0].shape.size())));
    std::vector<dnnl::memory::desc> srcs;
    for (const InputInfo& i : in) srcs.push_back(cpu::Layout(i.shape, p));
    const dnnl::memory::desc dst = cpu::Layout(out[0].shape, p);
    dnnl::concat::primitive_desc pd(dst, axis, srcs, cpu::Engine());
    auto run = std::make_unique<cpu::PrimitiveRun>();
    std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_DST, run->Output(0, dst, pd.dst_desc())}};
    for (size_t i = 0; i < srcs.size(); ++i)
      args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = run->Input(i, srcs[i], srcs[i]);
    run->Add(dnnl::concat(pd), std::move(args));
    return run;
  }
};

TASO_REGISTER_CPU_KERNEL(op_names::kConcat, ConcatKernel);

}  // namespace
}  // namespace taso::ops
