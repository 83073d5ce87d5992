// The cpu backend's measured costs: oneDNN kernel times (src/backends/cpu/kernels/), each kernel run as
// the cpu executor runs it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "taso/backends/cost_cache.h"
#include "taso/backends/measured_cost.h"
#include "taso/ir/op.h"
#include "taso/ir/params.h"

namespace taso {

class CpuCost : public MeasuredCost {
 public:
  // `cache` may be null (nothing kept between runs).
  explicit CpuCost(std::unique_ptr<CostCache> cache);
  std::string name() const override { return "cpu"; }

 protected:
  std::optional<KernelRun> PrepareRun(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
                                      absl::Span<const OutputType> outputs) override;
  std::vector<Params> Alternatives(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
                                   absl::Span<const OutputType> outputs) const override;
  bool IsView(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
              absl::Span<const OutputType> outputs) const override;
};

}  // namespace taso
