// Operators that only move data, on the cuda backend: Concat and Split as strided copies
// (cudaMemcpy2DAsync: one row per index before the axis), Transpose and Slice on our
// gather kernel.
// Reshapes and contiguous splits cost nothing: the executor makes them views.
#include "backends/cuda/cuda_kernel.h"
#include "backends/cuda/kernels/device_kernels.h"
#include "op_util.h"
#include "slice_window.h"
#include "taso/ir/ops/names.h"

namespace taso::ops::cuda_kernels {  // apart from the cpu kernels of the same names
namespace {

using cuda::Check;

// Rows before the axis, and the elements from the axis on, of each piece.
struct Pieces {
  int64_t rows = 1;
  std::vector<int64_t> widths;  // in elements
  int64_t total = 0;
};

absl::StatusOr<Pieces> Cut(const Params& p, const Shape& whole, absl::Span<const Shape* const> pieces) {
  ASSIGN_OR_RETURN(int axis, NormalizeAxis(p.Int("axis", 0), static_cast<int>(whole.size())));
  Pieces out;
  for (int d = 0; d < axis; ++d) out.rows *= whole[d];
  for (const Shape* s : pieces) {
    int64_t w = 1;
    for (size_t d = axis; d < s->size(); ++d) w *= (*s)[d];
    out.widths.push_back(w);
    out.total += w;
  }
  return out;
}

class StridedCopies : public cuda::Prepared {
 public:
  StridedCopies(Pieces pieces, bool gather) : pieces_(std::move(pieces)), gather_(gather) {}
  absl::Status Enqueue(cuda::Context& ctx) override {
    int64_t at = 0;
    const size_t wide = pieces_.total * sizeof(float);
    for (size_t i = 0; i < pieces_.widths.size(); ++i) {
      const size_t piece = pieces_.widths[i] * sizeof(float);
      if (piece == 0) continue;
      // Concat: piece i of every row into the output; Split: out of the input.
      cudaError_t e = gather_ ? cudaMemcpy2DAsync(out(0) + at, wide, in(i), piece, piece, pieces_.rows,
                                                  cudaMemcpyDeviceToDevice, ctx.stream)
                              : cudaMemcpy2DAsync(out(i), piece, in(0) + at, wide, piece, pieces_.rows,
                                                  cudaMemcpyDeviceToDevice, ctx.stream);
      RETURN_IF_ERROR(Check(e, gather_ ? "concatenating" : "splitting"));
      at += pieces_.widths[i];
    }
    return absl::OkStatus();
  }

 private:
  Pieces pieces_;
  bool gather_;
};

// Concat gathers its inputs into pieces of the output; Split scatters its input.
class PiecesKernel : public cuda::Kernel {
 public:
  explicit PiecesKernel(bool gather) : gather_(gather) {}
  absl::StatusOr<std::unique_ptr<cuda::Prepared>> Prepare(cuda::Context&, const Params& p,
                                                          absl::Span<const InputInfo> in,
                                                          absl::Span<const OutputType> out) const override {
    std::vector<const Shape*> pieces;
    if (gather_)
      for (const InputInfo& i : in) pieces.push_back(&i.shape);
    else
      for (const OutputType& o : out) pieces.push_back(&o.shape);
    ASSIGN_OR_RETURN(Pieces cut, Cut(p, gather_ ? out[0].shape : in[0].shape, pieces));
    return std::make_unique<StridedCopies>(std::move(cut), gather_);
  }

 private:
  bool gather_;
};

struct ConcatKernel : PiecesKernel {
  ConcatKernel() : PiecesKernel(/*gather=*/true) {}
};
struct SplitKernel : PiecesKernel {
  SplitKernel() : PiecesKernel(/*gather=*/false) {}
};

// The output read from the input through strides, from element `first` of the input.
class StridedReadRun : public cuda::Prepared {
 public:
  StridedReadRun(const cuda::device::Strided& s, int64_t first) : s_(s), first_(first) {}
  absl::Status Enqueue(cuda::Context& ctx) override {
    return Check(cuda::device::StridedCopy(in(0) + first_, out(0), s_, ctx.stream), "copying through strides");
  }

 private:
  cuda::device::Strided s_;
  int64_t first_;
};

class TransposeKernel : public cuda::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cuda::Prepared>> Prepare(cuda::Context&, const Params& p,
                                                          absl::Span<const InputInfo> in,
                                                          absl::Span<const OutputType> out) const override {
    const Shape& x = in[0].shape;
    const int rank = static_cast<int>(x.size());
    if (rank == 0 || rank > cuda::device::kMaxRank) return Bad("the cuda transpose takes ranks 1 to 6");
    std::vector<int64_t> perm = p.Ints("perm");
    if (perm.empty())
      for (int d = rank - 1; d >= 0; --d) perm.push_back(d);
    std::vector<int64_t> strides(rank, 1);
    for (int d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * x[d + 1];
    cuda::device::Strided s;
    s.rank = rank;
    for (int d = 0; d < rank; ++d) {
      s.shape[d] = out[0].shape[d];
      s.stride_a[d] = strides[perm[d]];
    }
    return std::make_unique<StridedReadRun>(s, 0);
  }
};

// Steps scale the input's strides (backwards ones negative), from the first element read.
class SliceKernel : public cuda::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cuda::Prepared>> Prepare(cuda::Context&, const Params&, absl::Span<const InputInfo> in,
                                                          absl::Span<const OutputType>) const override {
    ASSIGN_OR_RETURN(SliceWindow w, ReadSliceWindow(in));
    const Shape& x = in[0].shape;
    const int rank = static_cast<int>(x.size());
    if (rank == 0 || rank > cuda::device::kMaxRank) return Bad("the cuda slice takes ranks 1 to 6");
    const SliceStrides read = StridesOf(w, x);
    cuda::device::Strided s;
    s.rank = rank;
    for (int d = 0; d < rank; ++d) {
      s.shape[d] = w.out[d];
      s.stride_a[d] = read.strides[d];
    }
    return std::make_unique<StridedReadRun>(s, read.first);
  }
};

TASO_REGISTER_CUDA_KERNEL(op_names::kConcat, ConcatKernel);
TASO_REGISTER_CUDA_KERNEL(op_names::kSplit, SplitKernel);
TASO_REGISTER_CUDA_KERNEL(op_names::kTranspose, TransposeKernel);
TASO_REGISTER_CUDA_KERNEL(op_names::kSlice, SliceKernel);

}  // namespace
}  // namespace taso::ops::cuda_kernels
