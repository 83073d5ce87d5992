// Our own CUDA kernels for the memory-bound operators (device_kernels.cu), called from the
// cuda backend's operator files. Each queues one launch on `stream` and returns its error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace taso::cuda::device {

constexpr int kMaxRank = 6;

enum class Unary { kRelu, kTanh, kSigmoid, kSqrt, kErf, kGelu, kHardSigmoid, kHardSwish };
// The parameters of the unary operators that have some: HardSigmoid's alpha and beta.
struct UnaryParams {
  float alpha = 0, beta = 0;
};
enum class Binary { kAdd, kSub, kMul, kDiv, kPow };

// A tensor of up to kMaxRank dimensions read through strides (0 along a broadcast one).
struct Strided {
  int rank = 0;
  int64_t shape[kMaxRank] = {};     // of the output
  int64_t stride_a[kMaxRank] = {};  // per output dimension, in elements
  int64_t stride_b[kMaxRank] = {};
};

cudaError_t UnaryOp(Unary op, UnaryParams p, const float* x, float* y, int64_t n, cudaStream_t stream);
// y = x limited to [*lo, *hi], one-element bounds in device memory; a null bound does not limit.
cudaError_t Clip(const float* x, const float* lo, const float* hi, float* y, int64_t n, cudaStream_t stream);
// y = x * s for a one-element s in device memory.
cudaError_t ScaleBy(const float* x, const float* s, float* y, int64_t n, cudaStream_t stream);
// c = a op b with numpy broadcasting described by `s` (strides of a and b per output dim).
cudaError_t BinaryOp(Binary op, const float* a, const float* b, float* c, const Strided& s, cudaStream_t stream);
// y[i] = x at the input position of output position i: `s.stride_a` are the input's strides
// permuted into the output's order.
cudaError_t StridedCopy(const float* x, float* y, const Strided& s, cudaStream_t stream);

struct Window {
  int64_t n, c, h, w, oh, ow;
  int64_t kh, kw, sh, sw, pt, pl, pb, pr;
  bool max = false;
  bool count_include_pad = false;
};
cudaError_t Pool2D(const float* x, float* y, const Window& w, cudaStream_t stream);
// Copies an [n*c, h, w] tensor into the middle of an [n*c, oh, ow] one, zeros around it
// (`top` rows above, `left` columns before).
cudaError_t PadPlanes(const float* x, float* y, int64_t planes, int64_t h, int64_t w, int64_t oh, int64_t ow,
                      int64_t top, int64_t left, cudaStream_t stream);
// Mean over the trailing `inner` elements of each of `rows` rows.
cudaError_t RowMean(const float* x, float* y, int64_t rows, int64_t inner, cudaStream_t stream);
// Softmax along an axis of length `len`, between `outer` and `inner` elements.
cudaError_t Softmax(const float* x, float* y, int64_t outer, int64_t len, int64_t inner, cudaStream_t stream);
// Inference batch normalization over channels `c` of an [n, c, inner] tensor.
cudaError_t BatchNorm(const float* x, const float* scale, const float* bias, const float* mean, const float* var,
                      float epsilon, float* y, int64_t n, int64_t c, int64_t inner, cudaStream_t stream);

// LayerNormalization of each of `rows` rows of `width` elements, scaled and shifted by
// `width`-element tensors; `bias` may be null.
cudaError_t LayerNorm(const float* x, const float* scale, const float* bias, float epsilon, float* y, int64_t rows,
                      int64_t width, cudaStream_t stream);

}  // namespace taso::cuda::device
