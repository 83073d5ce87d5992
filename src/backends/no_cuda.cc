// Built where the CUDA toolkit or cuDNN is missing: the cuda backend says so.
#include "taso/backends.h"
#include "taso/cuda_executor.h"
#include "taso/measured_cost.h"

namespace taso {
namespace {

constexpr char kNotBuilt[] = "the cuda backend is not built: the CUDA toolkit or cuDNN was not found at configure time";

}  // namespace

BackendInfo CudaBackendInfo() { return BackendInfo{"cuda", false, false, kNotBuilt}; }

absl::StatusOr<std::unique_ptr<MeasuredCost>> MakeCudaCost(std::unique_ptr<CostCache>) {
  return absl::UnavailableError(kNotBuilt);
}

struct CudaExecutor::Impl {};
CudaExecutor::CudaExecutor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaExecutor::~CudaExecutor() = default;
absl::StatusOr<std::unique_ptr<CudaExecutor>> CudaExecutor::Create(const Graph&) {
  return absl::UnavailableError(kNotBuilt);
}
absl::StatusOr<TensorMap> CudaExecutor::Run(const TensorMap&) { return absl::UnavailableError(kNotBuilt); }
absl::StatusOr<double> CudaExecutor::MedianSeconds(int) { return absl::UnavailableError(kNotBuilt); }
absl::StatusOr<std::pair<double, double>> CudaExecutor::CompareSeconds(CudaExecutor&, CudaExecutor&, int) {
  return absl::UnavailableError(kNotBuilt);
}
int CudaExecutor::num_kernels() const { return 0; }
int CudaExecutor::num_reference() const { return 0; }

}  // namespace taso
