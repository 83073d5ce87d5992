// Split, Transpose and Slice on oneDNN, as reorders: a split copies sub-tensors (views of
// the input at offsets along the axis) into dense outputs; a transpose reads the input
// through permuted strides; a slice through strides scaled by its steps, from the first
// element it reads.
#include "backends/cpu/cpu_kernel.h"
#include "op_util.h"
#include "slice_window.h"
#include "taso/ir/ops/names.h"

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
    run->AddInputPort(0, src);
    memory::dims offsets(x.size(), 0);
    for (size_t i = 0; i < out.size(); ++i) {
      const Shape& o = out[i].shape;
      const memory::desc part = whole.submemory_desc(cpu::Dims(o), offsets);
      memory view(part, cpu::Engine(), src.get_data_handle());
      run->AddInputPort(0, view);  // rebound with the whole input
      dnnl::reorder::primitive_desc pd(cpu::Engine(), part, cpu::Engine(), cpu::Plain(o));
      run->Add(dnnl::reorder(pd), {{DNNL_ARG_FROM, view}, {DNNL_ARG_TO, run->Output(i, o, cpu::Plain(o))}});
      offsets[axis] += o[axis];
    }
    return run;
  }
};

// A reorder into a plain `out` tensor that reads the plain input `x` as `read` describes
// it (strides, an offset): the input port is the plain input, both memories on its data.
std::unique_ptr<cpu::Prepared> ReadThrough(const Shape& x, const memory::desc& read, const Shape& out) {
  const memory::desc dst = cpu::Plain(out);
  dnnl::reorder::primitive_desc pd(cpu::Engine(), read, cpu::Engine(), dst);
  auto run = std::make_unique<cpu::PrimitiveRun>();
  memory port = cpu::PrimitiveRun::Buffer(cpu::Plain(x));
  run->AddInputPort(0, port);
  memory through(read, cpu::Engine(), port.get_data_handle());
  run->AddInputPort(0, through);
  run->Add(dnnl::reorder(pd), {{DNNL_ARG_FROM, through}, {DNNL_ARG_TO, run->Output(0, out, dst)}});
  return run;
}

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
    return ReadThrough(x, memory::desc(dims, memory::data_type::f32, strides), out[0].shape);
  }
};

// PyTorch's attention cuts the packed query, key and value projection so: three slices
// along the last axis.
class SliceKernel : public cpu::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params&, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType> out) const override {
    ASSIGN_OR_RETURN(SliceWindow w, ReadSliceWindow(in));
    // oneDNN takes no negative strides, nor (it throws) strides it cannot order without
    // overlap: a step along an outer axis, or an inner step whose span passes the
    // dimension. Those slices run on the reference kernel (the executor and the cost
    // catch the throw).
    const SliceStrides read = StridesOf(w, in[0].shape);
    for (int64_t stride : read.strides)
      if (stride < 0) return Bad("slice: oneDNN reads no negative strides");
    const memory::dims strides(read.strides.begin(), read.strides.end());
    memory::desc src(cpu::Dims(w.out), memory::data_type::f32, strides);
    src.data.offset0 = read.first;
    return ReadThrough(in[0].shape, src, out[0].shape);
  }
};

// LayoutConvert: a reorder from the other layout into the one the node names.
class LayoutConvertKernel : public cpu::Kernel {
 public:
  // It reads the layout it does not write.
  bool ReadsBlocked(const Params& p, absl::Span<const InputInfo> in, size_t) const override {
    return !cpu::IsBlocked(p) && cpu::Blockable(in[0].shape);
  }
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params& p, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType>) const override {
    const Shape& x = in[0].shape;
    if (!cpu::Blockable(x)) return Bad("only 4-D tensors with whole channel blocks have a blocked layout");
    const memory::desc to = cpu::Layout(x, p);
    const memory::desc from = cpu::IsBlocked(p) ? cpu::Plain(x) : cpu::Layout(x, Params().Set("layout", "blocked"));
    auto run = std::make_unique<cpu::PrimitiveRun>();
    dnnl::reorder::primitive_desc pd(cpu::Engine(), from, cpu::Engine(), to);
    run->Add(dnnl::reorder(pd), {{DNNL_ARG_FROM, run->Input(0, from, from)}, {DNNL_ARG_TO, run->Output(0, to, to)}});
    return run;
  }
};

TASO_REGISTER_CPU_KERNEL(op_names::kSplit, SplitKernel);
TASO_REGISTER_CPU_KERNEL(op_names::kLayoutConvert, LayoutConvertKernel);
TASO_REGISTER_CPU_KERNEL(op_names::kTranspose, TransposeKernel);
TASO_REGISTER_CPU_KERNEL(op_names::kSlice, SliceKernel);

}  // namespace
}  // namespace taso::ops
