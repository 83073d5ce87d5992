// MatMul and Gemm on cuBLAS (float32, pedantic math: no TF32). cuBLAS is column-major: a
// row-major C = A B is computed as the column-major C^T = B^T A^T, which reads the same
// bytes with no copy.
#include "backends/cuda/cuda_kernel.h"
#include "backends/cuda/kernels/strided.h"
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops::cuda_kernels {  // apart from the cpu kernels of the same names
namespace {

using cuda::Check;

int64_t Batch(const Shape& s) {
  int64_t n = 1;
  for (size_t d = 0; d + 2 < s.size(); ++d) n *= s[d];
  return n;
}

// Row-major c[batch][m][n] = a[batch or 1][m][k] b[batch or 1][k][n].
class BatchedMatMul : public cuda::Prepared {
 public:
  BatchedMatMul(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t stride_a, int64_t stride_b)
      : batch_(batch), m_(m), n_(n), k_(k), stride_a_(stride_a), stride_b_(stride_b) {}
  absl::Status Enqueue(cuda::Context& ctx) override {
    const float one = 1.0f, zero = 0.0f;
    return Check(cublasSgemmStridedBatched(ctx.cublas, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n_),
                                           static_cast<int>(m_), static_cast<int>(k_), &one, in(1),
                                           static_cast<int>(n_), stride_b_, in(0), static_cast<int>(k_), stride_a_,
                                           &zero, out(0), static_cast<int>(n_), m_ * n_, static_cast<int>(batch_)),
                 "running a matrix product");
  }

 private:
  int64_t batch_, m_, n_, k_, stride_a_, stride_b_;
};

class MatMulKernel : public cuda::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cuda::Prepared>> Prepare(cuda::Context&, const Params& p,
                                                          absl::Span<const InputInfo> in,
                                                          absl::Span<const OutputType> out) const override {
    const Shape &a = in[0].shape, &b = in[1].shape, &c = out[0].shape;
    if (a.size() < 2 || b.size() < 2 || c.size() < 2)
      return Bad("cuBLAS matmul here takes matrices or batches of them");
    const int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
    const int64_t batch_a = Batch(a), batch_b = Batch(b), batch_c = Batch(c);
    if (batch_b == 1)  // b is shared: a's batch is more rows of one product
      return std::make_unique<BatchedMatMul>(1, m * batch_a, n, k, 0, 0);
    if (batch_a == 1 && batch_b == batch_c) return std::make_unique<BatchedMatMul>(batch_c, m, n, k, 0, k * n);
    if (batch_a == batch_b && batch_a == batch_c && a.size() == b.size())
      return std::make_unique<BatchedMatMul>(batch_c, m, n, k, m * k, k * n);
    return Bad("cuBLAS matmul here broadcasts a whole batch only");
  }
};

// Gemm: alpha op(A) op(B) + beta C, C broadcast into the output first.
class Gemm : public cuda::Prepared {
 public:
  Gemm(int64_t m, int64_t n, int64_t k, bool trans_a, bool trans_b, float alpha, float beta,
       std::optional<cuda::device::Strided> bias)
      : m_(m), n_(n), k_(k), trans_a_(trans_a), trans_b_(trans_b), alpha_(alpha), beta_(beta), bias_(bias) {}
  absl::Status Enqueue(cuda::Context& ctx) override {
    float beta = 0.0f;
    if (bias_) {
      RETURN_IF_ERROR(Check(cuda::device::StridedCopy(in(2), out(0), *bias_, ctx.stream), "broadcasting Gemm's C"));
      beta = beta_;
    }
    // Column-major: C^T (n x m) = op(B)^T op(A)^T.
    return Check(cublasSgemm(ctx.cublas, trans_b_ ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a_ ? CUBLAS_OP_T : CUBLAS_OP_N,
                             static_cast<int>(n_), static_cast<int>(m_), static_cast<int>(k_), &alpha_, in(1),
                             static_cast<int>(trans_b_ ? k_ : n_), in(0), static_cast<int>(trans_a_ ? m_ : k_), &beta,
                             out(0), static_cast<int>(n_)),
                 "running Gemm");
  }

 private:
  int64_t m_, n_, k_;
  bool trans_a_, trans_b_;
  float alpha_, beta_;
  std::optional<cuda::device::Strided> bias_;
};

class GemmKernel : public cuda::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cuda::Prepared>> Prepare(cuda::Context&, const Params& p,
                                                          absl::Span<const InputInfo> in,
                                                          absl::Span<const OutputType> out) const override {
    const Shape &a = in[0].shape, &c = out[0].shape;
    if (a.size() != 2 || c.size() != 2) return Bad("Gemm takes matrices");
    const bool trans_a = p.Int("transA", 0) != 0, trans_b = p.Int("transB", 0) != 0;
    const int64_t m = c[0], n = c[1], k = trans_a ? a[0] : a[1];
    std::optional<cuda::device::Strided> bias;
    if (in.size() == 3 && in[2].present) {
      // StridedCopy reads C at every output position (its b strides are unused).
      bias = cuda_strides::Broadcast(c, in[2].shape, in[2].shape);
      if (!bias) return Bad("Gemm's C does not broadcast to the output");
    }
    return std::make_unique<Gemm>(m, n, k, trans_a, trans_b, static_cast<float>(p.Float("alpha", 1.0)),
                                  static_cast<float>(p.Float("beta", 1.0)), bias);
  }
};

TASO_REGISTER_CUDA_KERNEL(op_names::kMatMul, MatMulKernel);
TASO_REGISTER_CUDA_KERNEL(op_names::kGemm, GemmKernel);

}  // namespace
}  // namespace taso::ops::cuda_kernels
