#include "pipeline/output_checks.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "onnx/onnx_pb.h"
#include "pipeline/check_plan.h"
#include "pipeline/cut_run.h"
#include "taso/backends/kernel_executor.h"
#include "taso/ir/executor.h"
#include "taso/ir/output_agreement.h"
#include "taso/ir/status_macros.h"
#include "taso/onnx/onnx_static_copy.h"

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

}  // namespace

// What a check of `after` compares: a float check point as a tensor (cut runs compute or
// are fed every one), the others by source.
SelfCheckCoverage SelfChecker::Coverage(const Graph& after) const {
  const Graph& before = before_;
  SelfCheckCoverage c;
  for (ValueId v : before.inputs()) c.random_inputs += before.value(v).dtype == DataType::kFloat32;
  for (const auto& [key, v] : CheckPoints(before)) {
    if (!Computable(before.value(v)))
      ++c.by_source;
    else
      ++(absl::StartsWith(key, "output ") ? c.outputs : c.opaque_inputs);
  }
  for (NodeId n = 0; n < after.num_nodes(); ++n) c.library_nodes += !after.node(n).op->is_opaque();
  for (NodeId n = 0; n < before.num_nodes(); ++n) {
    const Node& node = before.node(n);
    const bool fed_any =
        std::any_of(node.outputs.begin(), node.outputs.end(), [&](ValueId v) { return Computable(before.value(v)); });
    if (node.op->is_opaque() && fed_any) ++c.fed_opaque[node.onnx_node ? node.onnx_node->op_type() : "?"];
  }
  c.input_scales = scales_;
  return c;
}

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

absl::StatusOr<SelfCheckCoverage> SelfCheck(const Graph& before, const Graph& after, uint64_t seed,
                                            std::vector<double> scales) {
  return SelfChecker(before, seed, std::move(scales)).Check(after);
}

absl::Status SelfChecker::RunInput(const std::vector<ValueId>& keep) {
  std::vector<InputRun> runs;
  RunPart part;
  part.keep = keep;
  for (double scale : scales_) {
    InputRun run{scale, RandomInputs(before_, seed_, scale), {}, {}};
    ASSIGN_OR_RETURN(run.fed, RandomOpaqueOutputs(before_, seed_, scale));
    ASSIGN_OR_RETURN(run.expected, RunAroundOpaque(before_, run.inputs, run.fed, part));
    runs.push_back(std::move(run));
  }
  runs_ = std::move(runs);
  return absl::OkStatus();
}

absl::Status SelfChecker::KeepAlso(const std::vector<ValueId>& values) {
  RunPart part;
  part.record = false;
  for (ValueId v : values)
    if (!runs_.front().expected.kept.contains(v)) part.keep.push_back(v);
  if (part.keep.empty()) return absl::OkStatus();
  for (InputRun& run : runs_) {
    absl::flat_hash_set<ValueId> given;
    part.given.clear();
    for (const auto& [v, tensor] : run.expected.kept) {
      given.insert(v);
      part.given[v] = &tensor;
    }
    part.nodes = NodesComputing(before_, part.keep, given);
    ASSIGN_OR_RETURN(CutRun more, RunAroundOpaque(before_, run.inputs, run.fed, part));
    for (auto& [v, tensor] : more.kept) run.expected.kept.try_emplace(v, std::move(tensor));
  }
  return absl::OkStatus();
}

absl::StatusOr<SelfCheckCoverage> SelfChecker::Check(const Graph& after) {
  SelfCheckCoverage coverage;
  coverage.mismatch = OpaqueNodesMismatch(before_, after);
  if (!coverage.mismatch.empty()) return coverage;
  if (before_numbers_.empty()) {
    ASSIGN_OR_RETURN(before_numbers_, numbering_.Number(before_));
  }
  ASSIGN_OR_RETURN(const std::vector<uint32_t> after_numbers, numbering_.Number(after));
  const CheckPlan plan = PlanCheck(before_, before_numbers_, after, after_numbers);
  if (plan.all_alike) return Coverage(after);  // the same computation: nothing to run
  std::vector<ValueId> borrowed;
  for (const auto& [mine, input_value] : plan.borrowed) borrowed.push_back(input_value);
  RETURN_IF_ERROR(runs_.empty() ? RunInput(borrowed) : KeepAlso(borrowed));
  return Compare(after, plan);
}

// Runs `plan`'s part of `after` at each input scale, given the input run's values it
// borrows, and compares its check points with the input's.
absl::StatusOr<SelfCheckCoverage> SelfChecker::Compare(const Graph& after, const CheckPlan& plan) const {
  SelfCheckCoverage coverage = Coverage(after);
  OutputAgreement agreement;
  RunPart part;
  part.nodes = plan.after_nodes;
  part.alike_keys = plan.alike_keys;
  for (const InputRun& run : runs_) {
    part.alike = &run.expected;
    for (const auto& [mine, input_value] : plan.borrowed) {
      const auto kept = run.expected.kept.find(input_value);
      if (kept == run.expected.kept.end())
        return absl::InternalError(absl::StrCat("the input's run did not keep '", before_.value(input_value).name,
                                                "', which the optimized graph's check reads"));
      part.given[mine] = &kept->second;
    }
    ASSIGN_OR_RETURN(const CutRun got, RunAroundOpaque(after, run.inputs, run.fed, part));
    coverage.library_nodes_run = got.nodes_run;
    coverage.mismatch = SourcesMismatch(run.expected, got);
    if (!coverage.mismatch.empty()) return coverage;
    agreement.Merge(CompareOutputs(run.expected.tensors, got.tensors, run.scale));
  }
  coverage.max_difference = agreement.max_abs;
  if (!agreement.Agrees()) coverage.mismatch = agreement.Describe(" between the original and the optimized graph");
  return coverage;
}

absl::Status CheckMeasurable(const Graph& graph) {
  if (const std::string opaque = FirstOpaqueNode(graph); !opaque.empty())
    return absl::FailedPreconditionError(
        absl::StrCat("--measure runs both graphs on the backend's executor, which cannot run ", opaque,
                     ", outside the operator library; time the written model against the input with taso-run "
                     "(OUT --executor E --time N --against IN: where only shape arithmetic is outside the library) "
                     "or in ONNX Runtime (tools/ort/ort_run.js OUT --against IN --runs N)"));
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
