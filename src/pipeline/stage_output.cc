#include "pipeline/stage_output.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "taso/backends/cpu_preparation.h"
#include "taso/backends/layouts.h"
#include "taso/ir/join_pieces.h"
#include "taso/ir/status_macros.h"
#include "taso/passes/fold.h"
#include "taso/passes/inference_fusion.h"
#include "taso/passes/pass_list.h"
#include "taso/passes/row_form.h"

namespace taso::pipeline {

namespace {

// After spelled-out activations became one operator (FuseSpelledActivations): Splits
// take their constant sizes as a parameter (the form rules and joins of pieces read); batch
// normalizations, biases and relus are folded into the convolutions, then each bias is
// set apart again so that the rules (whose convolutions have none) match; products of
// activations of rank above 2 by a matrix are computed on their rows, as the rules state
// them. kAfterSearch undoes the last two after the search.
constexpr GraphPass kBeforeSearch[] = {
    {"split sizes as parameters", SplitSizesAsParameters},
    {"fuse into convolutions", FuseIntoConvolutions},
    {"separate convolution biases", SeparateConvolutionBias},
    {"flatten row regions", FlattenRowRegions},
};

// Rows get their rank back, weight-only subgraphs become weights, biases and activations
// go back into the convolutions, and nested concatenations and splits (merges of merges)
// become one.
constexpr GraphPass kAfterSearch[] = {
    {"restore row rank", RestoreRowRank},
    {"fold weights", FoldWeights},
    {"fuse into convolutions", FuseIntoConvolutions},
    {"join nested pieces", JoinNestedPieces},
};

// `optimized`, and the input as the backend runs it: ONNX Runtime folds and fuses into its
// convolutions what our lossless clean-up does (`cleaned`), the cpu runtime prepares a
// graph read from a file (cpu_preparation.h), the cuda executor runs the graph as it is.
absl::Status EstimateCosts(const StageInputs& in, CostModels& costs, const PipelineOptions& options, StageOutput& out) {
  CostModel& backend = *costs.backend;
  out.cost_after = backend.TotalCost(out.graph);
  if (options.backend == Backend::kCpu && costs.cpu != nullptr) {
    ASSIGN_OR_RETURN(const CpuPreparation prepared, PrepareForCpu(in.imported, *costs.cpu));
    out.cost_before = prepared.estimate_seconds;
    return absl::OkStatus();
  }
  out.cost_before = backend.TotalCost(options.backend == Backend::kOrt ? in.cleaned : in.imported);
  return absl::OkStatus();
}

// What the backend's executor runs: the graph at its layouts, when they are searched (with
// the layouts' record, and their cost, which is then the graph's cost after), else as it is.
absl::Status ApplyLayouts(CostModels& costs, const PipelineOptions& options, StageOutput& out) {
  if (options.search == SearchKind::kSubstitutions) {
    out.run_graph = out.graph;
    return absl::OkStatus();
  }
  Announce(options, "layouts", absl::StrCat(out.graph.num_nodes(), " nodes"));
  CpuLayouts layouts(*costs.cpu);
  const CpuLayouts::Plan plan = layouts.Choose(out.graph);
  ASSIGN_OR_RETURN(out.run_graph, layouts.Apply(out.graph, plan));
  out.layouts = PipelineResult::Layouts{.conversions = plan.conversions};
  for (bool blocked : plan.blocked) out.layouts->blocked_nodes += blocked;
  out.cost_after = plan.seconds;
  return absl::OkStatus();
}

// What the self-check found; nothing where it is off.
absl::StatusOr<std::optional<SelfCheckCoverage>> RunSelfCheck(const StageInputs& in, const Graph& optimized,
                                                              const PipelineOptions& options) {
  if (!options.self_check) return std::nullopt;
  Announce(options, "self-check", "both graphs on the reference kernels");
  return in.checker.Check(optimized);
}

}  // namespace

void Announce(const PipelineOptions& options, absl::string_view stage, absl::string_view detail) {
  if (options.on_stage) options.on_stage(stage, detail);
}

absl::StatusOr<Graph> PrepareFused(const Graph& activations) { return RunPasses(kBeforeSearch, activations); }
absl::StatusOr<Graph> FinishGraph(const Graph& searched) { return RunPasses(kAfterSearch, searched); }

absl::StatusOr<StageOutput> FinishAndCheck(const StageInputs& in, const Graph& searched,
                                           std::map<std::string, int> rules_applied, std::vector<AppliedRewrite> path,
                                           CostModels& costs, const PipelineOptions& options) {
  StageOutput out;
  ASSIGN_OR_RETURN(out.graph, FinishGraph(searched));
  out.rules_applied = std::move(rules_applied);
  out.path = std::move(path);
  RETURN_IF_ERROR(EstimateCosts(in, costs, options, out));
  RETURN_IF_ERROR(ApplyLayouts(costs, options, out));
  ASSIGN_OR_RETURN(out.self_check, RunSelfCheck(in, out.graph, options));
  return out;
}

// The input as read, its weight-only nodes folded and nothing else, checked and priced
// as the input (the runtime runs it as it runs the input): what is written where no
// rewrite is. The search's lossless clean-up (spelled-out activations fused,
// normalizations folded into convolutions) is no rewrite any runtime was timed on:
// ONNX Runtime and the cpu runtime do it themselves, and the cuda executor, which runs a
// graph as it is, ran BERT's cleaned-up input 8x slower when it had no Gelu kernel, and
// ResNet-50's 0.89x.
absl::StatusOr<StageOutput> AsReadOutput(const StageInputs& in, CostModels& costs, const PipelineOptions& options) {
  StageOutput out;
  ASSIGN_OR_RETURN(out.graph, FoldWeights(in.imported));
  RETURN_IF_ERROR(EstimateCosts(in, costs, options, out));
  out.cost_after = out.cost_before;
  out.run_graph = out.graph;
  if (options.search != SearchKind::kSubstitutions && costs.cpu != nullptr) {  // as the cpu runtime lays it out
    ASSIGN_OR_RETURN(CpuPreparation prepared, PrepareForCpu(in.imported, *costs.cpu));
    out.run_graph = std::move(prepared.graph);
    out.layouts = PipelineResult::Layouts{prepared.blocked_nodes, prepared.conversions};
  }
  ASSIGN_OR_RETURN(out.self_check, RunSelfCheck(in, out.graph, options));
  if (!out.Mismatch().empty())
    return absl::InternalError(absl::StrCat("self-check failed: ", out.Mismatch(), "; nothing written"));
  return out;
}

}  // namespace taso::pipeline
