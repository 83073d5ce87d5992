// Built where the CUDA toolkit or cuDNN is missing: the cuda backend says so.
#include "taso/backends/backends.h"
#include "taso/backends/cuda_cost.h"
#include "taso/backends/cuda_executor.h"

namespace taso {
namespace {

constexpr char kNotBuilt[] = "the cuda backend is not built: the CUDA toolkit or cuDNN was not found at configure time";

}  // namespace

BackendInfo CudaBackendInfo() { return BackendInfo{"cuda", false, false, kNotBuilt}; }

absl::StatusOr<std::unique_ptr<MeasuredCost>> MakeCudaCost(std::unique_ptr<CostCache>) {
  return absl::UnavailableError(kNotBuilt);
}

absl::StatusOr<std::unique_ptr<KernelExecutor>> MakeCudaExecutor(const Graph&) {
  return absl::UnavailableError(kNotBuilt);
}

absl::StatusOr<std::string> CudaChoicesDevice() { return absl::UnavailableError(kNotBuilt); }

}  // namespace taso
