// OptimizeModel: the stages in order, each a function of its own.
#include <utility>

#include "pipeline/cost_setup.h"
#include "pipeline/output_checks.h"
#include "pipeline/symbolic_dims.h"
#include "taso/backends/layouts.h"
#include "taso/fold.h"
#include "taso/inference_fusion.h"
#include "taso/pipeline.h"
#include "taso/status_macros.h"

namespace taso {

namespace {

using pipeline::CostModels;

// Refuses, before any work, what the later stages could not do.
absl::Status CheckPreconditions(const Graph& graph, const PipelineOptions& options) {
  RETURN_IF_ERROR(ValidateOptions(options));
  if (options.self_check) RETURN_IF_ERROR(pipeline::CheckSelfCheckCanRun(graph));
  return absl::OkStatus();
}

// Batch normalizations, biases and relus are folded into the convolutions, then each
// bias is set apart again so that the rules (whose convolutions have none) match;
// FinishGraph puts them back after the search.
absl::StatusOr<Graph> PrepareForSearch(const Graph& imported) {
  ASSIGN_OR_RETURN(const Graph fused, FuseIntoConvolutions(imported));
  return SeparateConvolutionBias(fused);
}

SearchResult SearchSubstitutions(const Graph& graph, const std::vector<RuleMatcher>& matchers, CostModels& costs,
                                 const PipelineOptions& options) {
  SearchOptions search = options.search_options;
  if (options.search == SearchKind::kLayouts) search.budget = 0;  // the input graph, priced at its layouts
  return Optimize(graph, matchers, costs.search(), search);
}

// A gain within the measurements' noise is no reason to rewrite the user's graph: then
// the search's input is kept and no rule counts as applied. Returns the graph kept.
const Graph& KeepInputUnlessGain(const Graph& input, PipelineResult& result) {
  SearchResult& search = result.search;
  const bool keep_input = search.best_cost > search.initial_cost * (1 - kMinSearchGain);
  if (!keep_input) return search.best;
  result.substitutions_dropped = !search.rules_applied.empty();
  search.rules_applied.clear();
  return input;
}

// Weight-only subgraphs become weights, and biases and activations go back into the
// convolutions.
absl::StatusOr<Graph> FinishGraph(const Graph& searched) {
  ASSIGN_OR_RETURN(const Graph folded, FoldWeights(searched));
  return FuseIntoConvolutions(folded);
}

void EstimateCosts(const Graph& imported, const Graph& optimized, CostModel& backend, PipelineResult& result) {
  result.cost_before = backend.TotalCost(imported);  // as it is, all plain
  result.cost_after = backend.TotalCost(optimized);
}

// What the backend's executor runs: the optimized graph at its layouts, when they are
// searched (their cost is then the graph's cost after), else as it is.
absl::StatusOr<Graph> ApplyLayouts(const Graph& optimized, CostModels& costs, const PipelineOptions& options,
                                   PipelineResult& result) {
  if (options.search == SearchKind::kSubstitutions) return optimized;
  CpuLayouts layouts(*costs.cpu);
  const CpuLayouts::Plan plan = layouts.Choose(optimized);
  ASSIGN_OR_RETURN(Graph laid_out, layouts.Apply(optimized, plan));
  result.cost_after = plan.seconds;
  result.layouts.emplace().conversions = plan.conversions;
  for (bool blocked : plan.blocked) result.layouts->blocked_nodes += blocked;
  return laid_out;
}

absl::Status RunSelfCheck(const Graph& imported, const Graph& optimized, const PipelineOptions& options,
                          PipelineResult& result) {
  if (!options.self_check) return absl::OkStatus();
  ASSIGN_OR_RETURN(result.self_check_difference, pipeline::SelfCheck(imported, optimized, options.seed));
  return absl::OkStatus();
}

// On the backend's executor: cuda's on the cuda backend, the cpu's otherwise.
absl::Status Measure(const Graph& imported, const Graph& run_graph, const PipelineOptions& options,
                     PipelineResult& result) {
  if (options.measure_runs <= 0) return absl::OkStatus();
  const Backend executor = options.backend == Backend::kCuda ? Backend::kCuda : Backend::kCpu;
  ASSIGN_OR_RETURN(result.measured, pipeline::MeasureBoth(executor, imported, run_graph, options.measure_runs));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PipelineResult> OptimizeModel(const OnnxModel& model, const std::vector<Rule>& rules,
                                             const PipelineOptions& options) {
  RETURN_IF_ERROR(CheckPreconditions(model.graph, options));
  ASSIGN_OR_RETURN(CostModels costs, pipeline::MakeCostModels(options));
  const std::vector<RuleMatcher> matchers = PrepareRules(rules);
  PipelineResult result;
  result.nodes_before = model.graph.num_nodes();
  result.rule_instances = static_cast<int>(matchers.size());

  ASSIGN_OR_RETURN(const Graph separated, PrepareForSearch(model.graph));
  result.search = SearchSubstitutions(separated, matchers, costs, options);
  const Graph& kept = KeepInputUnlessGain(separated, result);
  ASSIGN_OR_RETURN(Graph optimized, FinishGraph(kept));
  EstimateCosts(model.graph, optimized, *costs.backend, result);
  ASSIGN_OR_RETURN(const Graph run_graph, ApplyLayouts(optimized, costs, options, result));
  RETURN_IF_ERROR(RunSelfCheck(model.graph, optimized, options, result));
  RETURN_IF_ERROR(Measure(model.graph, run_graph, options, result));

  result.cost_sources = costs.Sources();
  result.model.graph = std::move(optimized);
  result.model.shell = model.shell;
  result.model.opset = model.opset;
  result.model.external_data = model.external_data;
  RETURN_IF_ERROR(pipeline::DecideSymbolicDims(model, options, result.model, result));
  return result;
}

}  // namespace taso
