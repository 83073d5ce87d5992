// End-to-end timing of two models on one of our executors (cpu: oneDNN; cuda), as
// `taso-run --executor` runs a written file (on cpu, each prepared as the cpu runtime
// prepares a graph read from a file: cpu_preparation.h): per pair, an executor of each model made in
// either order, runs of the two in turn (KernelExecutor::CompareSeconds), more pairs
// until the ratio is settled (paired_timing.h). The speed check's timer on the cpu and
// cuda targets.
#pragma once

#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "taso/backends/cpu_cost.h"

#include "taso/backends/paired_timing.h"
#include "taso/backends/runtime_timer.h"

namespace taso {

class ExecutorTimer : public RuntimeTimer {
 public:
  // `backend`: "cpu" or "cuda" (MakeKernelExecutor). `cpu_cost` (cpu only; null: the
  // models run as they are) chooses the prepared graphs' layouts and must outlive this.
  ExecutorTimer(std::string backend, PairLimits limits, CpuCost* cpu_cost = nullptr);
  std::string name() const override;
  // Fails where the executor cannot run a model (a node outside the operator library).
  absl::StatusOr<PairTiming> Compare(const OnnxModel& a, const OnnxModel& b) override;
  bool OutOfTime() const override { return clock_.OutOfTime(limits_.seconds); }
  // The graph the executor runs for a model's, made once per graph: its shape arithmetic
  // folded at its sizes where it holds any (RunnableAtItsSizes), prepared as the cpu
  // runtime prepares a graph where there is a cpu cost. Fails where the executor cannot
  // run it.
  absl::StatusOr<const Graph*> AsRun(const OnnxModel& model);

 private:
  // What AsRun's graphs are kept by.
  static std::string Key(const Graph& graph);

  std::string backend_;
  PairLimits limits_;
  CpuCost* cpu_cost_;
  absl::flat_hash_map<std::string, std::unique_ptr<Graph>> prepared_;
  TimerClock clock_;
};

}  // namespace taso
