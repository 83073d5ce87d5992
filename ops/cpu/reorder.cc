// Split and Transpose on oneDNN, as reorders: a split copies sub-tensors (views of the
// input at offsets along the axis) into dense outputs; a transpose reads the input
// through permuted strides.
#include "backends/cpu_kernel.h"
#include "op_util.h"

namespace taso::ops {
namespace {

using dnnl::memory;

class SplitKernel : public cpu::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params& p, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType> out) const override {
    const Shape& x = in[0].shape;
    ASSIGN_OR_RETURN(int axis, NormalizeAxis(p.Int("axis", 0), static_cast<int>(x.size())));
    const memory::desc whole = cpu::Plain(x);
    memory src = cpu::PrimitiveRun::Buffer(whole);
    auto run = std::make_unique<cpu::PrimitiveRun>();
    memory::dims offsets(x.size(), 0);
    for (const OutputType& o : out) {
      const memory::desc part = whole.submemory_desc(cpu::Dims(o.shape), offsets);
      const memory::desc dense = cpu::Plain(o.shape);
      dnnl::reorder::primitive_desc pd(cpu::Engine(), part, cpu::Engine(), dense);
      run->Add(dnnl::reorder(pd), {{DNNL_ARG_FROM, memory(part, cpu::Engine(), src.get_data_handle())},
                                   {DNNL_ARG_TO, cpu::PrimitiveRun::Buffer(dense)}});
      offsets[axis] += o.shape[axis];
    }
    run->Keep(std::move(src));
    return run;
  }
};

class TransposeKernel : public cpu::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params& p, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType> out) const override {
    const Shape& x = in[0].shape;
    std::vector<int64_t> perm = p.Ints("perm");
    if (perm.empty())
      for (int i = static_cast<int>(x.size()) - 1; i >= 0; --i) perm.push_back(i);
    if (perm.size() != x.size() || x.empty()) return Bad("transpose: a permutation of the input's dimensions");
    // The output's dimension i is input dimension perm[i]: read the input with its strides permuted.
    const Shape in_strides = RowMajorStrides(x);
    memory::dims dims, strides;
    for (int64_t d : perm) {
      dims.push_back(x[d]);
      strides.push_back(in_strides[d]);
    }
    const memory::desc src(dims, memory::data_type::f32, strides), dst = cpu::Plain(out[0].shape);
    dnnl::reorder::primitive_desc pd(cpu::Engine(), src, cpu::Engine(), dst);
    auto run = std::make_unique<cpu::PrimitiveRun>();
    run->Add(dnnl::reorder(pd), {{DNNL_ARG_FROM, cpu::PrimitiveRun::Buffer(src)},
                                 {DNNL_ARG_TO, cpu::PrimitiveRun::Buffer(dst)}});
    return run;
  }
};

TASO_REGISTER_CPU_KERNEL("Split", SplitKernel);
TASO_REGISTER_CPU_KERNEL("Transpose", TransposeKernel);

}  // namespace
}  // namespace taso::ops
