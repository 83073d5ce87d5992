#include "taso/kernel_executor.h"

#include <algorithm>
#include <chrono>

#include "absl/container/flat_hash_map.h"

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

absl::Status KernelExecutor::RunOnceTimingSteps(std::vector<double>&) {
  return absl::UnimplementedError("this executor cannot time single operators");
}

absl::StatusOr<std::vector<KernelExecutor::OperatorTime>> KernelExecutor::ProfileByOperator(int runs) {
  const std::vector<Step> steps = Steps();
  std::vector<std::vector<double>> times(steps.size());
  std::vector<double> seconds(steps.size());
  for (int i = 0; i < 2 + std::max(1, runs); ++i) {
    RETURN_IF_ERROR(RunOnceTimingSteps(seconds));
    if (i < 2) continue;  // warm-up
    for (size_t s = 0; s < steps.size(); ++s) times[s].push_back(seconds[s]);
  }
  std::vector<OperatorTime> by_op;
  absl::flat_hash_map<std::string, size_t> index;
  for (size_t s = 0; s < steps.size(); ++s) {
    auto [it, added] = index.try_emplace(steps[s].op, by_op.size());
    if (added) by_op.push_back({.op = steps[s].op});
    OperatorTime& t = by_op[it->second];
    ++t.nodes;
    t.reference += steps[s].reference;
    t.seconds += timing::Median(std::move(times[s]));
  }
  std::sort(by_op.begin(), by_op.end(), [](const OperatorTime& a, const OperatorTime& b) { return a.seconds > b.seconds; });
  return by_op;
}

absl::StatusOr<std::unique_ptr<KernelExecutor>> MakeKernelExecutor(absl::string_view backend, const Graph& graph) {
  if (backend == "cuda") return MakeCudaExecutor(graph);
  return CpuExecutor::Create(graph);
}

}  // namespace taso
