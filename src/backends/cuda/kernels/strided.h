// How the cuda backend's own kernels read their inputs: strides per output dimension.
#pragma once

#include <optional>

#include "backends/cuda/kernels/device_kernels.h"
#include "taso/ir/tensor.h"

namespace taso::ops::cuda_strides {

// Row-major strides of `in` read at every position of `out` with numpy broadcasting
// (`in` aligned to the trailing dimensions; 0 along a broadcast dimension).
inline std::optional<std::vector<int64_t>> BroadcastStrides(const Shape& out, const Shape& in) {
  if (in.size() > out.size()) return std::nullopt;
  std::vector<int64_t> strides(out.size(), 0);
  int64_t step = 1;
  for (size_t k = 0; k < in.size(); ++k) {
    const size_t d_in = in.size() - 1 - k, d_out = out.size() - 1 - k;
    if (in[d_in] != out[d_out] && in[d_in] != 1) return std::nullopt;
    strides[d_out] = in[d_in] == 1 ? 0 : step;
    step *= in[d_in];
  }
  return strides;
}

// c = a op b over `out`: nullopt when the ranks exceed what the kernels take.
inline std::optional<cuda::device::Strided> Broadcast(const Shape& out, const Shape& a, const Shape& b) {
  if (out.size() > static_cast<size_t>(cuda::device::kMaxRank)) return std::nullopt;
  auto sa = BroadcastStrides(out, a), sb = BroadcastStrides(out, b);
  if (!sa || !sb) return std::nullopt;
  cuda::device::Strided s;
  s.rank = static_cast<int>(out.size());
  for (size_t d = 0; d < out.size(); ++d) {
    s.shape[d] = out[d];
    s.stride_a[d] = (*sa)[d];
    s.stride_b[d] = (*sb)[d];
  }
  if (s.rank == 0) {  // a scalar: one element
    s.rank = 1;
    s.shape[0] = 1;
  }
  return s;
}

}  // namespace taso::ops::cuda_strides
