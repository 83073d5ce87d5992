#include "taso/kernel_executor.h"

#include <chrono>

#include "backends/timing.h"
#include "taso/cpu_executor.h"
#include "taso/cuda_executor.h"
#include "taso/status_macros.h"

namespace taso {

absl::StatusOr<double> KernelExecutor::TimedRun() {
  const auto start = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(RunOnce());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

absl::StatusOr<double> KernelExecutor::MedianSeconds(int runs) {
  return timing::MedianSeconds([this] { return TimedRun(); }, runs);
}

absl::StatusOr<std::pair<double, double>> KernelExecutor::CompareSeconds(KernelExecutor& a, KernelExecutor& b,
                                                                         int runs) {
  return timing::InTurn([&a] { return a.TimedRun(); }, [&b] { return b.TimedRun(); }, runs);
}

absl::StatusOr<std::unique_ptr<KernelExecutor>> MakeKernelExecutor(absl::string_view backend, const Graph& graph) {
  if (backend == "cuda") return MakeCudaExecutor(graph);
  return CpuExecutor::Create(graph);
}

}  // namespace taso
