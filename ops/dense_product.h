// The reference kernels' matrix product, shared by MatMul and Gemm.
#pragma once

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <vector>

#include "kernel_threads.h"
#include "taso/ir/parallel.h"
#include "taso/ir/scalar_domain.h"

namespace taso::ops {

// c[m, n] = a[m, k] . b[k, n], all three row-major and contiguous; c is overwritten and
// must not overlap a or b. Each element sums its k products in the order kk = 0..k-1, in
// every domain, so results are the same however the rows are grouped: rows go four at a
// time so that each row of b is read once per four rows of a (the self-check of a
// 12-layer encoder spends most of its time here, bound by reading b).
template <typename S>
void MultiplyDense(const S* a, const S* b, S* c, int64_t m, int64_t k, int64_t n) {
  std::fill(c, c + m * n, Domain<S>::Zero());
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    S* __restrict c0 = c + i * n;
    S* __restrict c1 = c0 + n;
    S* __restrict c2 = c1 + n;
    S* __restrict c3 = c2 + n;
    for (int64_t kk = 0; kk < k; ++kk) {
      const S a0 = a[i * k + kk], a1 = a[(i + 1) * k + kk], a2 = a[(i + 2) * k + kk], a3 = a[(i + 3) * k + kk];
      const S* __restrict brow = b + kk * n;
      for (int64_t j = 0; j < n; ++j) {
        const S bv = brow[j];
        c0[j] += a0 * bv;
        c1[j] += a1 * bv;
        c2[j] += a2 * bv;
        c3[j] += a3 * bv;
      }
    }
  }
  for (; i < m; ++i) {
    S* __restrict crow = c + i * n;
    for (int64_t kk = 0; kk < k; ++kk) {
      const S av = a[i * k + kk];
      const S* __restrict brow = b + kk * n;
      for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j];
    }
  }
}

// `batches` products of one size, MultiplyDense(a, b, c, m, k, n) with product i's
// pointers from `operands(i)` (a std::tuple<const S*, const S*, S*>), on as many threads as
// their multiply-adds pay for (KernelThreads), each taking blocks of whole groups of four
// rows. Every element is summed as MultiplyDense sums it, so the result is the same on any
// number of threads. Floats only: the other domains (fingerprints, symbolic terms) run on
// the calling thread.
template <typename S, typename Operands>
void MultiplyDenseBatches(int64_t batches, int64_t m, int64_t k, int64_t n, Operands operands) {
  const double multiply_adds = static_cast<double>(batches) * m * k * n;
  const int threads = std::is_same_v<S, float> ? KernelThreads(multiply_adds) : 1;
  if (threads == 1) {
    for (int64_t i = 0; i < batches; ++i) {
      const auto [a, b, c] = operands(i);
      MultiplyDense(a, b, c, m, k, n);
    }
    return;
  }
  const auto ceil_div = [](int64_t x, int64_t y) { return (x + y - 1) / y; };
  const int64_t blocks = std::min(ceil_div(m, 4), ceil_div(threads, batches));  // per product
  const int64_t rows = ceil_div(ceil_div(m, blocks), 4) * 4;
  ParallelFor(static_cast<size_t>(batches * blocks), threads, [&](size_t item) {
    const int64_t i = static_cast<int64_t>(item) / blocks, first = static_cast<int64_t>(item) % blocks * rows;
    if (first >= m) return;
    const auto [a, b, c] = operands(i);
    MultiplyDense(a + first * k, b, c + first * n, std::min(rows, m - first), k, n);
  });
}

// The transpose of row-major x[rows, cols], row-major [cols, rows].
template <typename S>
std::vector<S> Transposed(const S* x, int64_t rows, int64_t cols) {
  std::vector<S> t(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = x[r * cols + c];
  return t;
}

}  // namespace taso::ops
