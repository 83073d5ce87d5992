// Erf on the cpu backend. oneDNN 2.6 has no erf (only GELU, built on it), and the
// reference kernel's scalar libm calls make a transformer's GELU a large share of its
// run, so this is our own loop, written to vectorize: the series of erf near 0
// (small relative error there), Abramowitz and Stegun 7.1.26 elsewhere (absolute error
// 1.5e-7 in exact arithmetic, about 3e-7 in floats), with exp of a clamped argument.
#include <bit>
#include <cmath>
#include <cstdint>

#include "backends/cpu/cpu_kernel.h"
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

// e^y for y in [-16, 0]: 2^n * e^r, n = round(y / ln 2), |r| <= ln 2 / 2.
inline float ExpOfNonPositive(float y) {
  const float n = (y * 1.44269504f + 12582912.f) - 12582912.f;                // round to nearest without a call
  const float r = (y - n * 0.693145751953125f) - n * 1.428606765330187e-06f;  // ln 2 in two parts
  float e = 1.f / 720;
  e = e * r + 1.f / 120;
  e = e * r + 1.f / 24;
  e = e * r + 1.f / 6;
  e = e * r + 0.5f;
  e = e * r + 1.f;
  e = e * r + 1.f;
  return e * std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void ErfElements(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    float a = std::fabs(x[i]);
    a = a > 4.f ? 4.f : a;  // erf(4) rounds to 1; a NaN stays NaN
    const float t = 1.f / (1.f + 0.3275911f * a);
    float p = 1.061405429f;
    p = p * t - 1.453152027f;
    p = p * t + 1.421413741f;
    p = p * t - 0.284496736f;
    p = p * t + 0.254829592f;
    const float far = 1.f - p * t * ExpOfNonPositive(-a * a);
    const float s = a * a;  // erf(a) = 2 / sqrt(pi) * a * sum_k (-s)^k / (k! (2k + 1))
    float q = -1.f / 75600;
    q = q * s + 1.f / 9360;
    q = q * s - 1.f / 1320;
    q = q * s + 1.f / 216;
    q = q * s - 1.f / 42;
    q = q * s + 1.f / 10;
    q = q * s - 1.f / 3;
    q = q * s + 1.f;
    const float near = 1.1283791671f * a * q;
    y[i] = std::copysign(a < 0.5f ? near : far, x[i]);
  }
}

class ErfRun : public cpu::Prepared {
 public:
  explicit ErfRun(const dnnl::memory::desc& md)
      : in_(cpu::PrimitiveRun::Buffer(md)), out_(cpu::PrimitiveRun::Buffer(md)), n_(md.get_size() / sizeof(float)) {
    AddInputPort(0, in_);
    AddOutputPort(0, out_);
  }
  void Run() override {
    ErfElements(static_cast<const float*>(in_.get_data_handle()), static_cast<float*>(out_.get_data_handle()), n_);
  }

 private:
  dnnl::memory in_, out_;
  int64_t n_;
};

// Element-wise, so any layout: a blocked tensor's elements are erf'd where they lie.
class ErfKernel : public cpu::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params& p, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType>) const override {
    return std::make_unique<ErfRun>(cpu::Layout(in[0].shape, p));
  }
  std::vector<size_t> LayoutInputs(const Params&, absl::Span<const InputInfo>) const override { return {0}; }
};
TASO_REGISTER_CPU_KERNEL(op_names::kErf, ErfKernel);

}  // namespace
}  // namespace taso::ops
