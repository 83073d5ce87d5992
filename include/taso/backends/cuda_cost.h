// The cuda backend's measured costs: cuDNN, cuBLAS and our CUDA kernels' times
// (src/backends/cuda/kernels/), taken with CUDA events.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "taso/backends/cost_cache.h"
#include "taso/backends/measured_cost.h"

namespace taso {

// Fails where this build has no cuda backend or no GPU can be used, saying which.
// `cache` may be null (nothing kept between runs).
absl::StatusOr<std::unique_ptr<MeasuredCost>> MakeCudaCost(std::unique_ptr<CostCache> cache);

}  // namespace taso
