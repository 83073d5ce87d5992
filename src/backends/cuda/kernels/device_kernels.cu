// Grid-stride CUDA kernels for the memory-bound operators, computed as the reference
// kernels compute them (ops/*.cc): same windows, same padding counts.
#include <cfloat>

#include "device_kernels.h"

namespace taso::cuda::device {
namespace {

constexpr int kThreads = 256;

int Blocks(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65535 * 8 ? (b > 0 ? b : 1) : 65535 * 8);
}

__device__ float Clamp01(float v) { return fminf(fmaxf(v, 0.0f), 1.0f); }

__device__ float ApplyUnary(Unary op, UnaryParams p, float x) {
  switch (op) {
    case Unary::kRelu:
      return x > 0.0f ? x : 0.0f;
    case Unary::kTanh:
      return tanhf(x);
    case Unary::kSigmoid:
      return 1.0f / (1.0f + expf(-x));
    case Unary::kSqrt:
      return sqrtf(x);
    case Unary::kErf:
      return erff(x);
    case Unary::kGelu:  // as ops/gelu.cc: x * 0.5 * (1 + erf(x / sqrt 2))
      return x * 0.5f * (1.0f + erff(x / 1.41421356237309505f));
    case Unary::kHardSigmoid:
      return Clamp01(p.alpha * x + p.beta);
    case Unary::kHardSwish:
      return x * Clamp01(x / 6.0f + 0.5f);
  }
  return x;
}

__device__ float ApplyBinary(Binary op, float a, float b) {
  switch (op) {
    case Binary::kAdd:
      return a + b;
    case Binary::kSub:
      return a - b;
    case Binary::kMul:
      return a * b;
    case Binary::kDiv:
      return a / b;
    case Binary::kPow:
      return powf(a, b);
  }
  return a;
}

__global__ void UnaryKernel(Unary op, UnaryParams p, const float* x, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    y[i] = ApplyUnary(op, p, x[i]);
}

// As ops/clip.cc computes it, NaN and infinities included: a bound left null does not
// limit (no stand-in value that would clip an infinity or replace a NaN).
__global__ void ClipKernel(const float* x, const float* lo, const float* hi, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    float v = x[i];
    if (lo) v = v > *lo ? v : *lo;
    if (hi && v > *hi) v = *hi;
    y[i] = v;
  }
}

__global__ void ScaleKernel(const float* x, const float* s, float* y, int64_t n) {
  const float scale = *s;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    y[i] = x[i] * scale;
}

// The offsets into a and b of output element i.
__device__ void Offsets(const Strided& s, int64_t i, int64_t& a, int64_t& b) {
  a = 0;
  b = 0;
  for (int d = s.rank - 1; d >= 0; --d) {
    const int64_t at = i % s.shape[d];
    i /= s.shape[d];
    a += at * s.stride_a[d];
    b += at * s.stride_b[d];
  }
}

int64_t Count(const Strided& s) {
  int64_t n = 1;
  for (int d = 0; d < s.rank; ++d) n *= s.shape[d];
  return n;
}

__global__ void BinaryKernel(Binary op, const float* a, const float* b, float* c, Strided s, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t ia, ib;
    Offsets(s, i, ia, ib);
    c[i] = ApplyBinary(op, a[ia], b[ib]);
  }
}

__global__ void StridedCopyKernel(const float* x, float* y, Strided s, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t ix, unused;
    Offsets(s, i, ix, unused);
    y[i] = x[ix];
  }
}

__global__ void PoolKernel(const float* x, float* y, Window w, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t ox = i % w.ow, oy = (i / w.ow) % w.oh, plane = i / (w.ow * w.oh);
    const float* in = x + plane * w.h * w.w;
    float acc = w.max ? -FLT_MAX : 0.0f;
    int64_t inside = 0, padded = 0;
    for (int64_t ky = 0; ky < w.kh; ++ky) {
      const int64_t iy = oy * w.sh - w.pt + ky;
      if (iy >= w.h + w.pb) continue;  // beyond the padding (ceil mode)
      for (int64_t kx = 0; kx < w.kw; ++kx) {
        const int64_t ix = ox * w.sw - w.pl + kx;
        if (ix >= w.w + w.pr) continue;
        ++padded;
        if (iy < 0 || iy >= w.h || ix < 0 || ix >= w.w) continue;
        const float v = in[iy * w.w + ix];
        acc = w.max ? fmaxf(acc, v) : acc + v;
        ++inside;
      }
    }
    if (!w.max) acc /= static_cast<float>(w.count_include_pad ? padded : (inside > 0 ? inside : 1));
    y[i] = acc;
  }
}

__global__ void PadKernel(const float* x, float* y, int64_t h, int64_t w, int64_t oh, int64_t ow, int64_t top,
                          int64_t left, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t ox = i % ow, oy = (i / ow) % oh, plane = i / (ow * oh);
    const int64_t iy = oy - top, ix = ox - left;
    y[i] = iy >= 0 && iy < h && ix >= 0 && ix < w ? x[(plane * h + iy) * w + ix] : 0.0f;
  }
}

// One warp per row: a thread per row read its row alone, 32 rows apart in a warp's loads
// (BERT's LayerNorm means ran 62 us each on an H200).
constexpr int kWarp = 32;

int WarpBlocks(int64_t rows) { return Blocks(rows * kWarp); }

__device__ float WarpSum(float v) {
  for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ float WarpMax(float v) {
  for (int o = kWarp / 2; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// The first row of the calling warp, and the rows between a warp's rows; every lane of a
// warp gets the same rows, so the loops below stay converged for the shuffles.
__device__ int64_t FirstRow() { return (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) / kWarp; }
__device__ int64_t RowStride() { return int64_t{gridDim.x} * blockDim.x / kWarp; }

__global__ void RowMeanKernel(const float* x, float* y, int64_t rows, int64_t inner) {
  const int lane = threadIdx.x % kWarp;
  for (int64_t r = FirstRow(); r < rows; r += RowStride()) {
    const float* row = x + r * inner;
    float sum = 0.0f;
    for (int64_t k = lane; k < inner; k += kWarp) sum += row[k];
    sum = WarpSum(sum);
    if (lane == 0) y[r] = sum / static_cast<float>(inner);
  }
}

// Softmax along the last axis, one warp per row.
__global__ void SoftmaxRowsKernel(const float* x, float* y, int64_t rows, int64_t len) {
  const int lane = threadIdx.x % kWarp;
  for (int64_t r = FirstRow(); r < rows; r += RowStride()) {
    const float* in = x + r * len;
    float* out = y + r * len;
    float top = -FLT_MAX;
    for (int64_t k = lane; k < len; k += kWarp) top = fmaxf(top, in[k]);
    top = WarpMax(top);
    float sum = 0.0f;
    for (int64_t k = lane; k < len; k += kWarp) {
      const float e = expf(in[k] - top);
      out[k] = e;
      sum += e;
    }
    sum = WarpSum(sum);
    for (int64_t k = lane; k < len; k += kWarp) out[k] /= sum;
  }
}

// LayerNormalization, one warp per row: as ops/layer_norm.cc, the mean first, then the
// mean square of the deviations from it. `bias` may be null.
__global__ void LayerNormKernel(const float* x, const float* scale, const float* bias, float epsilon, float* y,
                                int64_t rows, int64_t width) {
  const int lane = threadIdx.x % kWarp;
  const float inverse_width = 1.0f / static_cast<float>(width);
  for (int64_t r = FirstRow(); r < rows; r += RowStride()) {
    const float* in = x + r * width;
    float* out = y + r * width;
    float sum = 0.0f;
    for (int64_t k = lane; k < width; k += kWarp) sum += in[k];
    const float mean = WarpSum(sum) * inverse_width;
    float squares = 0.0f;
    for (int64_t k = lane; k < width; k += kWarp) squares += (in[k] - mean) * (in[k] - mean);
    const float std_dev = sqrtf(WarpSum(squares) * inverse_width + epsilon);
    for (int64_t k = lane; k < width; k += kWarp) {
      const float v = (in[k] - mean) / std_dev * scale[k];
      out[k] = bias ? v + bias[k] : v;
    }
  }
}

// Softmax along another axis: a thread per line, neighbouring threads on neighbouring
// elements.
__global__ void SoftmaxKernel(const float* x, float* y, int64_t outer, int64_t len, int64_t inner) {
  const int64_t lines = outer * inner;
  for (int64_t l = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; l < lines; l += int64_t{gridDim.x} * blockDim.x) {
    const int64_t base = (l / inner) * len * inner + l % inner;
    float top = -FLT_MAX;
    for (int64_t k = 0; k < len; ++k) top = fmaxf(top, x[base + k * inner]);
    float sum = 0.0f;
    for (int64_t k = 0; k < len; ++k) {
      const float e = expf(x[base + k * inner] - top);
      y[base + k * inner] = e;
      sum += e;
    }
    for (int64_t k = 0; k < len; ++k) y[base + k * inner] /= sum;
  }
}

__global__ void BatchNormKernel(const float* x, const float* scale, const float* bias, const float* mean,
                                const float* var, float epsilon, float* y, int64_t c, int64_t inner, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t ch = (i / inner) % c;
    y[i] = (x[i] - mean[ch]) / sqrtf(var[ch] + epsilon) * scale[ch] + bias[ch];
  }
}

}  // namespace

cudaError_t UnaryOp(Unary op, UnaryParams p, const float* x, float* y, int64_t n, cudaStream_t stream) {
  UnaryKernel<<<Blocks(n), kThreads, 0, stream>>>(op, p, x, y, n);
  return cudaGetLastError();
}

cudaError_t Clip(const float* x, const float* lo, const float* hi, float* y, int64_t n, cudaStream_t stream) {
  ClipKernel<<<Blocks(n), kThreads, 0, stream>>>(x, lo, hi, y, n);
  return cudaGetLastError();
}

cudaError_t ScaleBy(const float* x, const float* s, float* y, int64_t n, cudaStream_t stream) {
  ScaleKernel<<<Blocks(n), kThreads, 0, stream>>>(x, s, y, n);
  return cudaGetLastError();
}

cudaError_t BinaryOp(Binary op, const float* a, const float* b, float* c, const Strided& s, cudaStream_t stream) {
  const int64_t n = Count(s);
  BinaryKernel<<<Blocks(n), kThreads, 0, stream>>>(op, a, b, c, s, n);
  return cudaGetLastError();
}

cudaError_t StridedCopy(const float* x, float* y, const Strided& s, cudaStream_t stream) {
  const int64_t n = Count(s);
  StridedCopyKernel<<<Blocks(n), kThreads, 0, stream>>>(x, y, s, n);
  return cudaGetLastError();
}

cudaError_t Pool2D(const float* x, float* y, const Window& w, cudaStream_t stream) {
  const int64_t n = w.n * w.c * w.oh * w.ow;
  PoolKernel<<<Blocks(n), kThreads, 0, stream>>>(x, y, w, n);
  return cudaGetLastError();
}

cudaError_t PadPlanes(const float* x, float* y, int64_t planes, int64_t h, int64_t w, int64_t oh, int64_t ow,
                      int64_t top, int64_t left, cudaStream_t stream) {
  const int64_t n = planes * oh * ow;
  PadKernel<<<Blocks(n), kThreads, 0, stream>>>(x, y, h, w, oh, ow, top, left, n);
  return cudaGetLastError();
}

cudaError_t RowMean(const float* x, float* y, int64_t rows, int64_t inner, cudaStream_t stream) {
  RowMeanKernel<<<WarpBlocks(rows), kThreads, 0, stream>>>(x, y, rows, inner);
  return cudaGetLastError();
}

cudaError_t Softmax(const float* x, float* y, int64_t outer, int64_t len, int64_t inner, cudaStream_t stream) {
  if (inner == 1)
    SoftmaxRowsKernel<<<WarpBlocks(outer), kThreads, 0, stream>>>(x, y, outer, len);
  else
    SoftmaxKernel<<<Blocks(outer * inner), kThreads, 0, stream>>>(x, y, outer, len, inner);
  return cudaGetLastError();
}

cudaError_t LayerNorm(const float* x, const float* scale, const float* bias, float epsilon, float* y, int64_t rows,
                      int64_t width, cudaStream_t stream) {
  LayerNormKernel<<<WarpBlocks(rows), kThreads, 0, stream>>>(x, scale, bias, epsilon, y, rows, width);
  return cudaGetLastError();
}

cudaError_t BatchNorm(const float* x, const float* scale, const float* bias, const float* mean, const float* var,
                      float epsilon, float* y, int64_t n, int64_t c, int64_t inner, cudaStream_t stream) {
  const int64_t total = n * c * inner;
  BatchNormKernel<<<Blocks(total), kThreads, 0, stream>>>(x, scale, bias, mean, var, epsilon, y, c, inner, total);
  return cudaGetLastError();
}

}  // namespace taso::cuda::device
