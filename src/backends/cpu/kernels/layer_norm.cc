// LayerNormalization on oneDNN: the input seen as rows of the normalized slice's length
// (oneDNN normalizes over the last dimension), scale and shift over that slice.
#include "backends/cpu/cpu_kernel.h"
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

class LayerNormKernel : public cpu::Kernel {
 public:
  bool ReadsWeight(size_t i, absl::Span<const InputInfo>) const override { return i > 0; }
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params& p, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType>) const override {
    ASSIGN_OR_RETURN(Rows rows, RowsFrom(in[0].shape, p.Int("axis", -1)));
    const bool shift = in.size() > 2 && in[2].present;
    const Shape data_shape{rows.count, rows.width}, slice{rows.width};
    const dnnl::memory::desc data = cpu::Plain(data_shape), per_slice = cpu::Plain(slice);
    auto flags = dnnl::normalization_flags::use_scale;
    if (shift) flags |= dnnl::normalization_flags::use_shift;
    dnnl::layer_normalization_forward::primitive_desc pd(
        dnnl::layer_normalization_forward::desc(dnnl::prop_kind::forward_inference, data,
                                                static_cast<float>(p.Float("epsilon", 1e-5)), flags),
        cpu::Engine());
    auto run = std::make_unique<cpu::PrimitiveRun>();
    std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, run->Input(0, data_shape, data)},
                                                  {DNNL_ARG_SCALE, run->Input(1, slice, per_slice)},
                                                  {DNNL_ARG_DST, run->Output(0, data_shape, data)}};
    if (shift) args[DNNL_ARG_SHIFT] = run->Input(2, slice, per_slice);
    run->Add(dnnl::layer_normalization_forward(pd), std::move(args));
    return run;
  }
};

TASO_REGISTER_CPU_KERNEL(op_names::kLayerNormalization, LayerNormKernel);

}  // namespace
}  // namespace taso::ops
