#include "pipeline/output_checks.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "onnx/onnx_pb.h"
#include "pipeline/cut_run.h"
#include "taso/backends/kernel_executor.h"
#include "taso/ir/executor.h"
#include "taso/ir/output_agreement.h"
#include "taso/ir/status_macros.h"

namespace taso::pipeline {

namespace {

// The optimizer keeps every opaque node as it is: the check points name them. Empty when
// both graphs hold the same.
std::string OpaqueNodesMismatch(const Graph& before, const Graph& after) {
  const std::map<std::string, std::string> expected = OpaqueNodes(before), got = OpaqueNodes(after);
  for (const auto& [key, type] : expected)
    if (!got.contains(key))
      return absl::StrCat("opaque node '", key, "' (", type, ") is missing from the optimized graph");
  for (const auto& [key, type] : got)
    if (!expected.contains(key))
      return absl::StrCat("the optimized graph has an opaque node '", key, "' (", type, ") the original has not");
  return "";
}

// The values nothing computes must come from the same place in both graphs. Empty when
// they do.
std::string SourcesMismatch(const CutRun& expected, const CutRun& got) {
  if (expected.sources == got.sources) return "";
  for (const auto& [key, source] : expected.sources) {
    auto it = got.sources.find(key);
    if (it == got.sources.end() || it->second != source)
      return absl::StrCat(key, " is ", source, " in the original but ",
                          it == got.sources.end() ? "computed" : it->second, " in the optimized graph");
  }
  return "the optimized graph has check points the original has not";
}

SelfCheckCoverage Coverage(const Graph& before, const Graph& after, const TensorMap& inputs, const TensorMap& fed,
                           const CutRun& run) {
  SelfCheckCoverage c;
  c.random_inputs = static_cast<int>(inputs.size());
  for (const auto& [key, t] : run.tensors) ++(absl::StartsWith(key, "output ") ? c.outputs : c.opaque_inputs);
  c.by_source = static_cast<int>(run.sources.size());
  for (NodeId n = 0; n < after.num_nodes(); ++n) c.library_nodes += !after.node(n).op->is_opaque();
  for (NodeId n = 0; n < before.num_nodes(); ++n) {
    const Node& node = before.node(n);
    const bool fed_any = std::any_of(node.outputs.begin(), node.outputs.end(),
                                     [&](ValueId v) { return fed.contains(before.value(v).name); });
    if (node.op->is_opaque() && fed_any) ++c.fed_opaque[node.onnx_node ? node.onnx_node->op_type() : "?"];
  }
  return c;
}

}  // namespace

absl::Status CheckSelfCheckCanRun(const Graph& graph) {
  for (NodeId n = 0; n < graph.num_nodes(); ++n) {
    const Node& node = graph.node(n);
    if (node.op->is_opaque()) continue;
    for (ValueId id : node.inputs) {
      if (id == kNoValue) continue;
      const Value& v = graph.value(id);
      const bool fed = v.dtype == DataType::kFloat32 && v.shape_known;
      if (!fed && !graph.ConstantData(id))
        return absl::FailedPreconditionError(
            absl::StrCat("the self-check cannot cover node '", node.name, "': it reads '", v.name, "' (",
                         DataTypeName(v.dtype), v.shape_known ? "" : ", shape unknown", "), which it cannot feed"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<SelfCheckCoverage> SelfCheck(const Graph& before, const Graph& after, uint64_t seed) {
  return SelfChecker(before, seed).Check(after);
}

absl::Status SelfChecker::RunInput() {
  std::vector<InputRun> runs;
  for (double scale : kInputScales) {
    InputRun run{scale, RandomInputs(before_, seed_, scale), {}, {}};
    ASSIGN_OR_RETURN(run.fed, RandomOpaqueOutputs(before_, seed_, scale));
    ASSIGN_OR_RETURN(run.expected, RunAroundOpaque(before_, run.inputs, run.fed));
    runs.push_back(std::move(run));
  }
  runs_ = std::move(runs);
  return absl::OkStatus();
}

absl::StatusOr<SelfCheckCoverage> SelfChecker::Check(const Graph& after) {
  SelfCheckCoverage coverage;
  coverage.mismatch = OpaqueNodesMismatch(before_, after);
  if (!coverage.mismatch.empty()) return coverage;
  if (runs_.empty()) RETURN_IF_ERROR(RunInput());
  OutputAgreement agreement;
  for (const InputRun& run : runs_) {
    ASSIGN_OR_RETURN(const CutRun got, RunAroundOpaque(after, run.inputs, run.fed));
    coverage = Coverage(before_, after, run.inputs, run.fed, run.expected);
    coverage.mismatch = SourcesMismatch(run.expected, got);
    if (!coverage.mismatch.empty()) return coverage;
    agreement.Merge(CompareOutputs(run.expected.tensors, got.tensors, run.scale));
  }
  coverage.max_difference = agreement.max_abs;
  coverage.input_scales.assign(std::begin(kInputScales), std::end(kInputScales));
  if (!agreement.Agrees()) coverage.mismatch = agreement.Describe(" between the original and the optimized graph");
  return coverage;
}

absl::Status CheckExecutorCanRun(const Graph& graph) {
  for (NodeId n = 0; n < graph.num_nodes(); ++n)
    if (const Node& node = graph.node(n); node.op->is_opaque())
      return absl::FailedPreconditionError(absl::StrCat("node '", node.name, "' (",
                                                        node.onnx_node ? node.onnx_node->op_type() : "?",
                                                        " is outside the operator library)"));
  return absl::OkStatus();
}

absl::Status CheckMeasurable(const Graph& graph) {
  if (absl::Status s = CheckExecutorCanRun(graph); !s.ok())
    return absl::FailedPreconditionError(
        absl::StrCat("--measure runs both graphs on the backend's executor, which cannot run ", s.message(),
                     "; time the written model in ONNX Runtime instead "
                     "(tools/ort/ort_run.js MODEL --against OTHER --runs N)"));
  return absl::OkStatus();
}

absl::StatusOr<PipelineResult::Measurement> MeasureBoth(Backend executor, const Graph& before, const Graph& after,
                                                        int runs) {
  const auto start = std::chrono::steady_clock::now();
  const TensorMap inputs = RandomInputs(before, 3);
  const absl::string_view name = BackendName(executor);
  ASSIGN_OR_RETURN(const GraphComparison c, CompareGraphs(name, before, after, inputs, runs, kMeasurePairs));
  // The measured graphs must agree too (the optimized one at its layouts, on the
  // backend's kernels).
  if (const OutputAgreement agreement = CompareOutputs(c.a_outputs, c.b_outputs); !agreement.Agrees())
    return absl::InternalError(
        absl::StrCat("on the ", name, " executor the optimized graph's output ", agreement.Describe()));
  PipelineResult::Measurement m;
  m.executor = executor;
  m.runs = runs;
  m.before_seconds = c.a_seconds;
  m.after_seconds = c.b_seconds;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return m;
}

}  // namespace taso::pipeline
