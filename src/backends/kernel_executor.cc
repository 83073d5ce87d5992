#include "taso/backends/kernel_executor.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

#include "backends/timing.h"
#include "taso/backends/cpu_executor.h"
#include "taso/backends/cuda_executor.h"
#include "taso/ir/status_macros.h"

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
  std::sort(by_op.begin(), by_op.end(),
            [](const OperatorTime& a, const OperatorTime& b) { return a.seconds > b.seconds; });
  return by_op;
}

absl::StatusOr<std::unique_ptr<KernelExecutor>> MakeKernelExecutor(absl::string_view backend, const Graph& graph) {
  if (backend == "cuda") return MakeCudaExecutor(graph);
  if (backend == "cpu") return CpuExecutor::Create(graph);
  return absl::InvalidArgumentError(absl::StrCat("no kernel executor '", backend, "' (cpu or cuda)"));
}

absl::StatusOr<std::pair<double, double>> TimeExecutorPair(absl::string_view backend, const Graph& a, const Graph& b,
                                                           const TensorMap& inputs, bool a_first, int runs,
                                                           std::pair<TensorMap, TensorMap>* outputs) {
  std::unique_ptr<KernelExecutor> ea, eb;
  if (a_first) {
    ASSIGN_OR_RETURN(ea, MakeKernelExecutor(backend, a));
    ASSIGN_OR_RETURN(eb, MakeKernelExecutor(backend, b));
  } else {
    ASSIGN_OR_RETURN(eb, MakeKernelExecutor(backend, b));
    ASSIGN_OR_RETURN(ea, MakeKernelExecutor(backend, a));
  }
  ASSIGN_OR_RETURN(TensorMap oa, ea->Run(inputs));
  ASSIGN_OR_RETURN(TensorMap ob, eb->Run(inputs));
  if (outputs != nullptr) *outputs = {std::move(oa), std::move(ob)};
  return KernelExecutor::CompareSeconds(*ea, *eb, runs);
}

absl::StatusOr<GraphComparison> CompareGraphs(absl::string_view backend, const Graph& a, const Graph& b,
                                              const TensorMap& inputs, int runs, int pairs) {
  pairs = std::max(2, pairs + pairs % 2);
  const int runs_per_pair = std::max(5, (runs + pairs - 1) / pairs);
  GraphComparison out;
  double log_a = 0, log_b = 0;
  for (int k = 0; k < pairs; ++k) {
    std::pair<TensorMap, TensorMap> first_outputs;
    ASSIGN_OR_RETURN(const auto times, TimeExecutorPair(backend, a, b, inputs, /*a_first=*/k % 2 == 0, runs_per_pair,
                                                        k == 0 ? &first_outputs : nullptr));
    if (k == 0) {
      out.a_outputs = std::move(first_outputs.first);
      out.b_outputs = std::move(first_outputs.second);
    }
    log_a += std::log(times.first);
    log_b += std::log(times.second);
  }
  out.a_seconds = std::exp(log_a / pairs);
  out.b_seconds = std::exp(log_b / pairs);
  return out;
}

}  // namespace taso
