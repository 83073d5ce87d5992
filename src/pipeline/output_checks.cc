#include "pipeline/output_checks.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "taso/backends/kernel_executor.h"
#include "taso/executor.h"
#include "taso/status_macros.h"

namespace taso::pipeline {

namespace {

// The largest output difference accepted, relative to the outputs' size: rewrites
// reorder float sums.
bool CloseEnough(const TensorMap& a, const TensorMap& b, double* diff) {
  *diff = MaxAbsDifference(a, b);
  return RelativeDifference(a, b) <= 1e-3;
}

}  // namespace

absl::Status CheckSelfCheckCanRun(const Graph& graph) {
  for (NodeId n = 0; n < graph.num_nodes(); ++n)
    if (const Node& node = graph.node(n); node.op->is_opaque())
      return absl::FailedPreconditionError(absl::StrCat(
          "the self-check cannot run node '", node.name, "' (ONNX operator ",
          node.onnx_node ? node.onnx_node->op_type() : "?",
          " is outside the operator library); pass --skip_self_check to optimize the graph around such nodes ",
          "without the check"));
  return absl::OkStatus();
}

absl::StatusOr<double> SelfCheck(const Graph& before, const Graph& after, uint64_t seed) {
  const TensorMap inputs = RandomInputs(before, seed);
  ASSIGN_OR_RETURN(const TensorMap before_outputs, RunReference(before, inputs));
  ASSIGN_OR_RETURN(const TensorMap after_outputs, RunReference(after, inputs));
  double diff = 0;
  if (!CloseEnough(before_outputs, after_outputs, &diff))
    return absl::InternalError(absl::StrCat("self-check failed: the optimized graph's outputs differ by ", diff,
                                            " from the original's; nothing written"));
  return diff;
}

absl::StatusOr<PipelineResult::Measurement> MeasureBoth(Backend executor, const Graph& before, const Graph& after,
                                                        int runs) {
  const auto start = std::chrono::steady_clock::now();
  const TensorMap inputs = RandomInputs(before, 3);
  const absl::string_view name = BackendName(executor);
  ASSIGN_OR_RETURN(const GraphComparison c, CompareGraphs(name, before, after, inputs, runs, kMeasurePairs));
  // The measured graphs must agree too (the optimized one at its layouts, on the
  // backend's kernels).
  double diff = 0;
  if (!CloseEnough(c.a_outputs, c.b_outputs, &diff))
    return absl::InternalError(absl::StrCat("on the ", name, " executor the optimized graph's outputs differ by ", diff,
                                            " from the original's"));
  PipelineResult::Measurement m;
  m.executor = executor;
  m.runs = runs;
  m.before_seconds = c.a_seconds;
  m.after_seconds = c.b_seconds;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return m;
}

}  // namespace taso::pipeline
