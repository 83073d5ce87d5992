// MaxPool, AveragePool, GlobalAveragePool and ReduceMean on the cuda backend's own kernels
// (the windows of the reference kernels: ceil mode, padding counted or not).
#include "backends/cuda/cuda_kernel.h"
#include "backends/cuda/kernels/device_kernels.h"
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops::cuda_kernels {  // apart from the cpu kernels of the same names
namespace {

using cuda::Check;

class PoolRun : public cuda::Prepared {
 public:
  explicit PoolRun(const cuda::device::Window& w) : w_(w) {}
  absl::Status Enqueue(cuda::Context& ctx) override {
    return Check(cuda::device::Pool2D(in(0), out(0), w_, ctx.stream), "running a pooling");
  }

 private:
  cuda::device::Window w_;
};

// Max pooling when kMax, else average pooling.
template <bool kMax>
class PoolKernel : public cuda::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cuda::Prepared>> Prepare(cuda::Context&, const Params& p,
                                                          absl::Span<const InputInfo> in,
                                                          absl::Span<const OutputType> out) const override {
    const Shape &x = in[0].shape, &y = out[0].shape;
    const auto k = p.Ints("kernel");
    if (x.size() != 4 || k.size() != 2) return Bad("2-D pooling takes 4-D tensors");
    ASSIGN_OR_RETURN(Window2D win, ReadWindow(p, k[0], k[1]));
    if (win.dh != 1 || win.dw != 1) return Bad("the cuda pooling has no dilations");
    cuda::device::Window w{x[0],   x[1],   x[2],   x[3],   y[2],   y[3],   win.kh, win.kw,
                           win.sh, win.sw, win.pt, win.pl, win.pb, win.pr, kMax,   p.Int("count_include_pad", 0) != 0};
    return std::make_unique<PoolRun>(w);
  }
};

class MeanRun : public cuda::Prepared {
 public:
  MeanRun(int64_t rows, int64_t inner) : rows_(rows), inner_(inner) {}
  absl::Status Enqueue(cuda::Context& ctx) override {
    return Check(cuda::device::RowMean(in(0), out(0), rows_, inner_, ctx.stream), "running a mean");
  }

 private:
  int64_t rows_, inner_;
};

class GlobalAveragePoolKernel : public cuda::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cuda::Prepared>> Prepare(cuda::Context&, const Params& p,
                                                          absl::Span<const InputInfo> in,
                                                          absl::Span<const OutputType>) const override {
    const Shape& x = in[0].shape;
    if (x.size() < 3) return Bad("GlobalAveragePool takes N, C and spatial dimensions");
    const int64_t inner = NumElements(absl::MakeConstSpan(x).subspan(2));
    return std::make_unique<MeanRun>(x[0] * x[1], inner);
  }
};

// A mean over trailing dimensions (a spelled-out LayerNorm's); other axes are left to the
// reference kernel.
class ReduceMeanKernel : public cuda::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cuda::Prepared>> Prepare(cuda::Context&, const Params& p,
                                                          absl::Span<const InputInfo> in,
                                                          absl::Span<const OutputType>) const override {
    const Shape& x = in[0].shape;
    const int rank = static_cast<int>(x.size());
    std::vector<bool> reduced(rank, !p.Has("axes"));
    for (int64_t a : p.Ints("axes")) {
      ASSIGN_OR_RETURN(int axis, NormalizeAxis(a, rank));
      reduced[axis] = true;
    }
    int first = rank;  // the first reduced dimension of the trailing run
    while (first > 0 && reduced[first - 1]) --first;
    for (int d = 0; d < first; ++d)
      if (reduced[d]) return Bad("the cuda ReduceMean reduces trailing dimensions only");
    const int64_t rows = NumElements(absl::MakeConstSpan(x).subspan(0, first));
    return std::make_unique<MeanRun>(rows, NumElements(absl::MakeConstSpan(x).subspan(first)));
  }
};

TASO_REGISTER_CUDA_KERNEL(op_names::kMaxPool, PoolKernel<true>);
TASO_REGISTER_CUDA_KERNEL(op_names::kAveragePool, PoolKernel<false>);
TASO_REGISTER_CUDA_KERNEL(op_names::kGlobalAveragePool, GlobalAveragePoolKernel);
TASO_REGISTER_CUDA_KERNEL(op_names::kReduceMean, ReduceMeanKernel);

}  // namespace
}  // namespace taso::ops::cuda_kernels
