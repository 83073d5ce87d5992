// OptimizeModel: the stages in order, each a function of its own.
#include <algorithm>
#include <map>
#include <memory>
#include <utility>

#include "pipeline/cost_setup.h"
#include "pipeline/output_checks.h"
#include "pipeline/speed_check.h"
#include "taso/backends/layouts.h"
#include "taso/backends/ort_timer.h"
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

// With the engine the options name; the e-graph prices e-nodes by the backend's cost and
// graphs as the backtracking search does (at their layouts when they are searched).
void SearchSubstitutions(const Graph& graph, const std::vector<RuleMatcher>& matchers, CostModels& costs,
                         const PipelineOptions& options, PipelineResult& result) {
  SearchOptions search = options.search_options;
  if (options.search == SearchKind::kLayouts) search.budget = 0;  // the input graph, priced at its layouts
  if (options.engine == SearchEngine::kBacktracking || options.search == SearchKind::kLayouts) {
    result.search = Optimize(graph, matchers, costs.search(), search);
    return;
  }
  egraph::EGraphSearchResult found =
      egraph::OptimizeWithEGraph(graph, matchers, *costs.backend, costs.search(), options.egraph);
  result.search = std::move(found.search);
  result.egraph = found.stats;
}

// A gain within the measurements' noise is no reason to rewrite the user's graph: then
// the search's input is kept and no rule counts as applied. Returns the graph kept.
const Graph& KeepInputUnlessGain(const Graph& input, PipelineResult& result) {
  SearchResult& search = result.search;
  const bool keep_input = search.best_cost > search.initial_cost * (1 - kMinSearchGain);
  if (!keep_input) return search.best;
  result.substitutions_dropped = !search.rules_applied.empty();
  search.rules_applied.clear();
  search.path.clear();
  return input;
}

// Weight-only subgraphs become weights, and biases and activations go back into the
// convolutions.
absl::StatusOr<Graph> FinishGraph(const Graph& searched) {
  ASSIGN_OR_RETURN(const Graph folded, FoldWeights(searched));
  return FuseIntoConvolutions(folded);
}

// The timer of the speed check: the options', else ONNX Runtime's on the ort target;
// null where the speed is not verified. `owned` keeps one made here.
RuntimeTimer* SpeedTimer(const PipelineOptions& options, const CostModels& costs,
                         std::unique_ptr<RuntimeTimer>& owned) {
  if (!options.verify_speed) return nullptr;
  if (options.timer != nullptr) return options.timer;
  if (options.target != Target::kOrt || costs.ort_worker == nullptr) return nullptr;
  owned = std::make_unique<OrtTimer>(costs.ort_worker, OrtTimer::Options{.threads = options.ort_threads});
  return owned.get();
}

// Times the optimized model against the input in the target's runtime and returns the
// graph to write: the search's rewrites that make it measurably faster (speed_check.h).
absl::StatusOr<Graph> VerifySpeed(const OnnxModel& model, const Graph& separated,
                                  const std::vector<RuleMatcher>& matchers, Graph optimized, RuntimeTimer* timer,
                                  PipelineResult& result) {
  if (timer == nullptr) return optimized;
  SearchResult& search = result.search;
  auto build_graph = [&](const std::vector<bool>& keep, std::map<std::string, int>* applied) -> absl::StatusOr<Graph> {
    ASSIGN_OR_RETURN(const Graph replayed, ReplayRewrites(separated, matchers, search.path, keep, applied));
    return FinishGraph(replayed);
  };
  auto build = [&](const std::vector<bool>& keep) -> absl::StatusOr<OnnxModel> {
    const bool all = std::find(keep.begin(), keep.end(), false) == keep.end();
    if (all) return OnnxModel{optimized, model.shell, model.opset};
    ASSIGN_OR_RETURN(Graph graph, build_graph(keep, nullptr));
    return OnnxModel{std::move(graph), model.shell, model.opset};
  };
  std::vector<std::string> groups;
  for (const AppliedRewrite& step : search.path) groups.push_back(matchers[step.matcher].rule().name);
  // A search that applied rules without recording them can be undone only as a whole.
  if (search.path.empty() && !search.rules_applied.empty()) groups.push_back("the search's graph");
  ASSIGN_OR_RETURN(const pipeline::SpeedChoice choice, pipeline::ChooseFasterRewrites(*timer, model, groups, build));
  result.speed_check = choice.check;
  if (choice.check.rewrites_kept == choice.check.rewrites) return optimized;
  search.rules_applied.clear();
  return build_graph(choice.keep, &search.rules_applied);
}

// The input as the backend runs it: ONNX Runtime folds and fuses into its convolutions
// what our lossless clean-up does (`cleaned`), our executors run the graph as it is.
void EstimateCosts(const Graph& imported, const Graph& cleaned, const Graph& optimized, CostModel& backend,
                   const PipelineOptions& options, PipelineResult& result) {
  result.cost_before = backend.TotalCost(options.backend == Backend::kOrt ? cleaned : imported);
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
  SearchSubstitutions(separated, matchers, costs, options, result);
  const Graph& kept = KeepInputUnlessGain(separated, result);
  ASSIGN_OR_RETURN(Graph finished, FinishGraph(kept));
  std::unique_ptr<RuntimeTimer> owned_timer;
  ASSIGN_OR_RETURN(Graph optimized, VerifySpeed(model, separated, matchers, std::move(finished),
                                                SpeedTimer(options, costs, owned_timer), result));
  ASSIGN_OR_RETURN(const Graph cleaned, FinishGraph(separated));
  EstimateCosts(model.graph, cleaned, optimized, *costs.backend, options, result);
  ASSIGN_OR_RETURN(const Graph run_graph, ApplyLayouts(optimized, costs, options, result));
  RETURN_IF_ERROR(RunSelfCheck(model.graph, optimized, options, result));
  RETURN_IF_ERROR(Measure(model.graph, run_graph, options, result));

  result.cost_sources = costs.Sources();
  result.model = OnnxModel{std::move(optimized), model.shell, model.opset};
  return result;
}

}  // namespace taso
