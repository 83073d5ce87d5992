#include "taso/ir/output_agreement.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace taso {

double ToleranceScale(const Tensor<float>& t) {
  double scale = 1;
  for (float x : t.data)
    if (std::isfinite(x)) scale = std::max(scale, static_cast<double>(std::fabs(x)));
  return scale;
}

double TensorDifference(const Tensor<float>& expected, const Tensor<float>& got) {
  const double inf = std::numeric_limits<double>::infinity();
  if (expected.shape != got.shape) return inf;
  double worst = 0;
  for (size_t i = 0; i < expected.data.size(); ++i) {
    const float x = expected.data[i], y = got.data[i];
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y)) return inf;
    } else if (x != y) {
      // Equal infinities were equal above; any other infinity makes this one infinite.
      worst = std::max(worst, std::fabs(static_cast<double>(x) - y));
    }
  }
  return worst;
}

void OutputAgreement::Merge(const OutputAgreement& other) {
  const double max_abs_seen = std::max(max_abs, other.max_abs);
  if (other.relative > relative || worst.empty()) *this = other;
  max_abs = max_abs_seen;
}

std::string OutputAgreement::Describe(absl::string_view between) const {
  const std::string inputs =
      input_scale > 0 ? absl::StrCat(" for inputs in [-", input_scale, ", ", input_scale, "]") : "";
  return absl::StrCat(worst, " differs by ", worst_abs, between, inputs,
                      " (tolerated: ", kOutputTolerance * worst_scale, ", relative to its largest magnitude ",
                      worst_scale, ")");
}

OutputAgreement CompareOutputs(const TensorMap& expected, const TensorMap& got, double input_scale) {
  const double inf = std::numeric_limits<double>::infinity();
  OutputAgreement a;
  a.input_scale = input_scale;
  for (const auto& [name, t] : expected) {
    auto it = got.find(name);
    const double d = it == got.end() ? inf : TensorDifference(t, it->second);
    const double scale = ToleranceScale(t);
    a.max_abs = std::max(a.max_abs, d);
    if (d / scale > a.relative || a.worst.empty()) {
      a.relative = d / scale;
      a.worst = name;
      a.worst_abs = d;
      a.worst_scale = scale;
    }
  }
  for (const auto& [name, t] : got)
    if (!expected.contains(name)) a = OutputAgreement{inf, inf, name, inf, 1, input_scale};
  return a;
}

}  // namespace taso
