// OptimizeModel: the stages in order, each a function of its own.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

#include "pipeline/change_summary.h"
#include "pipeline/cost_setup.h"
#include "pipeline/output_checks.h"
#include "pipeline/region_estimate.h"
#include "pipeline/search_engines.h"
#include "pipeline/speed_at_sizes.h"
#include "pipeline/speed_stage.h"
#include "pipeline/stage_output.h"
#include "pipeline/symbolic_dims.h"
#include "taso/backends/cpu_preparation.h"
#include "taso/backends/executor_timer.h"
#include "taso/backends/ort_timer.h"
#include "taso/ir/memory_limit.h"
#include "taso/ir/status_macros.h"
#include "taso/passes/activation_fusion.h"
#include "taso/passes/einsum_products.h"
#include "taso/passes/fold.h"
#include "taso/passes/rewrite_gated_mixtures.h"
#include "taso/pipeline/pipeline.h"

namespace taso {

namespace {

using pipeline::AsReadOutput;
using pipeline::CostModels;
using pipeline::StageInputs;
using pipeline::StageOutput;

// Refuses, before any work, what the later stages could not do.
absl::Status CheckPreconditions(const Graph& graph, const PipelineOptions& options) {
  RETURN_IF_ERROR(ValidateOptions(options));
  RETURN_IF_ERROR(CheckGraphMemory(graph, options.max_memory_bytes));
  if (options.self_check) RETURN_IF_ERROR(pipeline::CheckSelfCheckCanRun(graph));
  if (options.measure_runs > 0) RETURN_IF_ERROR(pipeline::CheckMeasurable(graph));
  return absl::OkStatus();
}

// Whether the search applied rewrites whose gain beats the noise (kMinSearchGain); its graph
// is dropped otherwise.
bool Gained(const SearchFound& search) {
  return !search.rules_applied.empty() && search.best_cost <= search.initial_cost * (1 - kMinSearchGain);
}

// A rewrite no rule states, to offer to the speed check: it is written only where it
// passes the self-check and runs measurably faster (than the search's graph too, where
// the speed check kept that). Nothing where it changed nothing.
std::optional<egraph::Alternative> Offered(Graph rewritten, std::map<std::string, int> rules_applied, int applied,
                                           absl::string_view rewrite, absl::string_view pricing) {
  if (applied == 0) return std::nullopt;
  rules_applied[std::string(rewrite)] += applied;
  return egraph::Alternative{std::move(rewritten), std::move(rules_applied), std::string(pricing)};
}

// The same, applied to the input with its activations fused and then prepared as the
// search's input was made from it; nothing where that preparation fails (it is an offer:
// the model is optimized without it).
std::optional<egraph::Alternative> OfferedOnInput(const Graph& rewritten, int applied, absl::string_view rewrite,
                                                  absl::string_view pricing) {
  if (applied == 0) return std::nullopt;
  absl::StatusOr<Graph> prepared = pipeline::PrepareFused(rewritten);
  if (!prepared.ok()) return std::nullopt;
  return Offered(*std::move(prepared), {}, applied, rewrite, pricing);
}

// The rewrites no rule states (docs/ARCHITECTURE.md, "Rewrites checked only by
// execution"), timed after the search's own graph (before it where the search's costs
// price them below it: VerifySpeed) and before the e-graph's other extractions, in this
// order: the input with its Einsums computed as matrix products
// (einsum_products.h); the search's graph with them too, where the search found a gain
// (which a speed check that kept the search's graph times against it); the input with
// its mixtures of experts merged (rewrite_gated_mixtures.h; the merge reads the input at
// its rank). `activations`: the input with its activations fused, as the search's input
// was made from it. None where no speed check runs.
void OfferUnprovedRewrites(const Graph& activations, const SearchFound& search, const PipelineOptions& options,
                           std::vector<egraph::Alternative>& alternatives) {
  if (!options.verify_speed) return;
  std::vector<std::optional<egraph::Alternative>> offers;
  if (absl::StatusOr<EinsumsLowered> lowered = LowerEinsumsToProducts(activations); lowered.ok())
    offers.push_back(OfferedOnInput(lowered->graph, lowered->einsums, kEinsumProductRewrite, kEinsumsAsProducts));
  if (Gained(search))
    if (absl::StatusOr<EinsumsLowered> lowered = LowerEinsumsToProducts(search.best); lowered.ok())
      offers.push_back(Offered(std::move(lowered->graph), search.rules_applied, lowered->einsums, kEinsumProductRewrite,
                               kSearchWithEinsumsAsProducts));
  if (absl::StatusOr<GatedMixturesMerged> merged = MergeGatedMixtures(activations); merged.ok())
    offers.push_back(OfferedOnInput(merged->graph, merged->mixtures, kGatedMixtureRewrite, kGatedMixturesMerged));
  std::vector<egraph::Alternative> first;
  for (std::optional<egraph::Alternative>& offer : offers)
    if (offer) first.push_back(*std::move(offer));
  alternatives.insert(alternatives.begin(), std::make_move_iterator(first.begin()),
                      std::make_move_iterator(first.end()));
}

// The checked output and its record: whether the search's rewrites were dropped for a gain
// within the measurements' noise (no reason to rewrite the user's graph), or rejected by
// the self-check (the rules, and what differed).
struct Checked {
  StageOutput out;
  std::optional<double> dropped_search_gain;
  std::map<std::string, int> rejected_rules;
  std::string rejection;
};

// The searched graph, finished and checked; the input as read where the search kept no
// rewrite. Where the self-check finds the searched graph different, the search's rewrites
// are dropped and the input as read is checked and returned instead.
absl::StatusOr<Checked> CheckedOutput(const StageInputs& in, const SearchFound& search, CostModels& costs,
                                      const PipelineOptions& options) {
  Checked checked;
  if (!Gained(search)) {
    if (!search.rules_applied.empty())
      checked.dropped_search_gain = search.initial_cost > 0 ? 1 - search.best_cost / search.initial_cost : 0;
    ASSIGN_OR_RETURN(checked.out, AsReadOutput(in, costs, options));
    return checked;
  }
  ASSIGN_OR_RETURN(checked.out,
                   pipeline::FinishAndCheck(in, search.best, search.rules_applied, search.path, costs, options));
  if (checked.out.Mismatch().empty()) return checked;
  checked.rejected_rules = search.rules_applied;
  checked.rejection = checked.out.Mismatch();
  ASSIGN_OR_RETURN(checked.out, AsReadOutput(in, costs, options));
  return checked;
}

// What the regions where the written graph differs from the input's may take to time, to
// a 1% spread (which four pairs of half a second each give on most models); and the whole
// input against its region, to 3% (its error counts times the part of the region saved,
// a few percent).
constexpr double kRegionSeconds = 8, kShareSeconds = 4;

// The timers of the regions' comparisons on a measured backend: ONNX Runtime on ort, our
// executor on cpu and cuda where it runs the input (every node in the operator library);
// none on the analytic backend, whose estimate stays by operators.
struct RegionTimers {
  std::unique_ptr<RuntimeTimer> region, share;
};
std::optional<RegionTimers> MakeRegionTimers(const Graph& input, const CostModels& costs,
                                             const PipelineOptions& options) {
  const PairLimits region{.stop_when_resolved = false, .seconds = kRegionSeconds};
  const PairLimits share{.target_spread = 0.03, .stop_when_resolved = false, .seconds = kShareSeconds};
  if (options.backend == Backend::kOrt) {
    if (costs.ort_worker == nullptr) return std::nullopt;
    return RegionTimers{std::make_unique<OrtTimer>(costs.ort_worker, options.ort_threads, region),
                        std::make_unique<OrtTimer>(costs.ort_worker, options.ort_threads, share)};
  }
  if (options.backend != Backend::kCpu && options.backend != Backend::kCuda) return std::nullopt;
  if (!pipeline::CheckMeasurable(input).ok()) return std::nullopt;
  const std::string executor(BackendName(options.backend));
  return RegionTimers{std::make_unique<ExecutorTimer>(executor, region, costs.cpu),
                      std::make_unique<ExecutorTimer>(executor, share, costs.cpu)};
}

// The written output priced by its regions, and the regions' record (none where they were
// not timed).
struct Estimated {
  StageOutput out;
  std::optional<PipelineResult::RegionEstimate> estimate;
};

// Where the speed was to be verified and the target's runtime could not time the input
// (`unverifiable`, from SpeedTimer), the input as read: a rewrite's speed there is then
// unknown, and estimates alone have written models slower there.
absl::StatusOr<StageOutput> InputAsReadUnlessVerifiable(const StageInputs& in, StageOutput out,
                                                        const std::string& unverifiable, CostModels& costs,
                                                        const PipelineOptions& options) {
  if (unverifiable.empty()) return out;
  return AsReadOutput(in, costs, options);
}

// Where the regions were not timed, a graph the speed check timed against the input is
// priced by those times: two whole runs in the target's runtime say more than a sum of
// operators, and the input's and the output's estimates then agree with the decision.
StageOutput PricedBySpeedCheck(StageOutput written, const std::optional<PipelineResult::SpeedCheck>& check) {
  if (!check || check->kept_input || check->written_untimed || written.rules_applied.empty()) return written;
  const PairTiming& timing = check->timing;
  if (!(timing.a_seconds > 0) || !(timing.b_seconds > 0)) return written;
  written.cost_before = timing.a_seconds;
  written.cost_after = timing.b_seconds;
  return written;
}

// The stand-in that times the regions: the caller's region timer, else its timer where
// that does not time the speed check (whose comparisons it counts); none otherwise.
RuntimeTimer* StandInRegionTimer(const PipelineOptions& options) {
  if (options.region_timer != nullptr) return options.region_timer;
  return options.verify_speed ? nullptr : options.timer;
}

// On a measured backend, the written graph's estimate from its differing regions timed in
// the target's runtime (region_estimate.h): a sum of operators timed one at a time misses
// what a whole run costs between and around them. The caller's stand-ins time them
// instead where it gives any.
Estimated EstimateWritten(const OnnxModel& model, const StageInputs& in, StageOutput written,
                          const std::optional<PipelineResult::SpeedCheck>& speed_check, CostModels& costs,
                          const PipelineOptions& options) {
  // The input as read (no rewrite written) runs as the cleaned-up input does in the
  // runtimes, which fold and fuse as our clean-up does: then nothing differs.
  const Graph& graph = written.rules_applied.empty() ? in.cleaned : written.graph;
  const pipeline::Costs by_operators{written.cost_before, written.cost_after};
  std::optional<pipeline::RegionPricing> priced;
  if (options.timer != nullptr || options.region_timer != nullptr) {
    if (RuntimeTimer* stand_in = StandInRegionTimer(options))
      priced = pipeline::EstimateByRegions(model, in.cleaned, graph, *costs.backend,
                                           {*stand_in, *stand_in, by_operators, speed_check});
  } else if (std::optional<RegionTimers> timers = MakeRegionTimers(in.cleaned, costs, options)) {
    pipeline::Announce(options, "estimate", absl::StrCat("the regions that differ, in ", timers->region->name()));
    priced = pipeline::EstimateByRegions(model, in.cleaned, graph, *costs.backend,
                                         {*timers->region, *timers->share, by_operators, speed_check});
  }
  if (!priced) return Estimated{PricedBySpeedCheck(std::move(written), speed_check), std::nullopt};
  written.cost_before = priced->costs.before;
  written.cost_after = priced->costs.after;
  return Estimated{std::move(written), std::move(priced->estimate)};
}

// Without the speed check, the timing of the regions that differ is the one measurement of
// the written graph in the target's runtime: where the search's region runs measurably
// slower than the input's, no rewrite is written: the input is written instead (as read,
// AsReadOutput) and checked as any output, and the regions' record says so.
absl::StatusOr<Estimated> InputWhereRegionSlower(const StageInputs& in, Estimated estimated, CostModels& costs,
                                                 const PipelineOptions& options) {
  if (options.verify_speed || !estimated.estimate) return estimated;
  const PairTiming& timing = estimated.estimate->timing;
  if (!timing.Resolved() || timing.ratio() >= 1) return estimated;
  ASSIGN_OR_RETURN(estimated.out, AsReadOutput(in, costs, options));
  estimated.estimate->input_written = true;
  return estimated;
}

// The output, and the prices of rewrites dropped for pricing above the input as read.
struct PricedOutput {
  StageOutput out;
  std::optional<PipelineResult::EstimatedSlower> estimated_slower;
};

// Rewrites priced above the input as read are dropped and the input as read is written
// (`estimated_slower` says so): an output whose own estimate is slower is never written,
// even where the speed check timed it faster, since the two measurements then disagree and
// the input is the safe one. The search starts from the cleaned-up graph, which can price
// above the input. Every other path that writes no rewrite has written the input as read
// already (AsReadOutput).
absl::StatusOr<PricedOutput> InputAsReadUnlessRewritesPay(const StageInputs& in, StageOutput out, CostModels& costs,
                                                          const PipelineOptions& options) {
  if (out.rules_applied.empty() || out.cost_after < out.cost_before) return PricedOutput{std::move(out), std::nullopt};
  PipelineResult::EstimatedSlower slower{out.cost_after, out.cost_before};
  ASSIGN_OR_RETURN(StageOutput as_read, AsReadOutput(in, costs, options));
  return PricedOutput{std::move(as_read), slower};
}

// On the backend's executor: cuda's on the cuda backend, the cpu's otherwise, where the
// input runs as the cpu runtime prepares it (cpu_preparation.h) when a cpu cost model
// can choose its layouts.
absl::StatusOr<std::optional<PipelineResult::Measurement>> Measure(const Graph& imported, const Graph& run_graph,
                                                                   CostModels& costs, const PipelineOptions& options) {
  if (options.measure_runs <= 0) return std::nullopt;
  const Backend executor = options.backend == Backend::kCuda ? Backend::kCuda : Backend::kCpu;
  pipeline::Announce(options, "measuring", absl::StrCat(options.measure_runs, " runs of each graph"));
  std::optional<CpuPreparation> prepared;
  if (executor == Backend::kCpu && costs.cpu != nullptr) {
    ASSIGN_OR_RETURN(prepared, PrepareForCpu(imported, *costs.cpu));
  }
  return pipeline::MeasureBoth(executor, prepared ? prepared->graph : imported, run_graph, options.measure_runs);
}

// A model none of whose nodes the library computes (one all of float16, say) is returned
// as it is, but for its constant nodes, which become initializers (those the import made
// of shape arithmetic included); those nothing reads any more are not written. Its
// symbolic dimensions are decided as any model's are, so it keeps those it was read with.
absl::StatusOr<PipelineResult> Unchanged(const OnnxModel& model, const PipelineOptions& options) {
  PipelineResult result;
  result.model = model;
  if (absl::StatusOr<Graph> folded = FoldWeights(model.graph); folded.ok()) result.model.graph = *std::move(folded);
  result.nodes_before = OnnxNodeCount(model);
  result.nodes_after = OnnxNodeCount(result.model);
  result.left_alone = pipeline::LeftAlone(model.graph);
  result.nothing_to_optimize = true;
  RETURN_IF_ERROR(pipeline::DecideSymbolicDims(model, options, result.model, result));
  return result;
}

// The model to write, in the input's shell, and what describes it: the rewrites it applies
// (the search's graph and cost those of the e-graph's other extraction where it is one),
// its estimates, layouts and self-check.
void DescribeWritten(const OnnxModel& input, StageOutput out, PipelineResult& result) {
  result.search.rules_applied = std::move(out.rules_applied);
  result.search.path = std::move(out.path);
  if (out.extraction) {
    result.search.best = std::move(out.extraction->graph);
    result.search.best_cost = out.extraction->search_cost;
  }
  result.cost_before = out.cost_before;
  result.cost_after = out.cost_after;
  result.layouts = out.layouts;
  result.self_check = std::move(out.self_check);
  result.model = InShellOf(input, std::move(out.graph));
  result.model.external_data = input.external_data;
}

// Where the speed check kept a rewritten model whose symbolic dimensions the search ran at
// sizes of its own choosing, the same at larger sizes (speed_at_sizes.h), in a timer of
// its own (the options' where given), so that it has up to --verify-speed-seconds more;
// the input as read is written where that model runs measurably slower there, and the
// result describes it (measured again where asked for).
absl::Status CheckAtLargerSizes(const OnnxModel& model, const StageInputs& in, CostModels& costs,
                                const PipelineOptions& options, PipelineResult& result) {
  if (result.symbolic_dims.empty() || !pipeline::SpeedCheckKeptRewrites(result)) return absl::OkStatus();
  std::unique_ptr<RuntimeTimer> owned;
  RuntimeTimer* timer = pipeline::SpeedTimer(options, costs, model, in.cleaned, owned);
  if (timer == nullptr) return absl::OkStatus();
  ASSIGN_OR_RETURN(result.larger_sizes, pipeline::TimeAtLargerSizes(model, result.model, result, *timer, options));
  if (!result.larger_sizes || !result.larger_sizes->slower) return absl::OkStatus();
  ASSIGN_OR_RETURN(StageOutput as_read, AsReadOutput(in, costs, options));
  ASSIGN_OR_RETURN(result.measured, Measure(model.graph, as_read.run_graph, costs, options));
  result.region_estimate.reset();
  DescribeWritten(model, std::move(as_read), result);
  result.symbolic_dims.clear();
  result.symbolic_check_difference.reset();
  return pipeline::DecideSymbolicDims(model, options, result.model, result);
}

// What the summary says beyond the figures: what was left alone, how the rules read.
void DescribeChanges(const std::vector<Rule>& rules, PipelineResult& result) {
  result.left_alone = pipeline::LeftAlone(result.model.graph);
  result.rule_forms = pipeline::RuleForms(rules, result.search.rules_applied);
}

}  // namespace

absl::StatusOr<PipelineResult> OptimizeModel(const OnnxModel& model, const std::vector<Rule>& rules,
                                             const PipelineOptions& options) {
  RETURN_IF_ERROR(CheckPreconditions(model.graph, options));
  if (!pipeline::HasLibraryComputation(model.graph)) return Unchanged(model, options);
  ASSIGN_OR_RETURN(CostModels costs, pipeline::MakeCostModels(options));
  PipelineResult result;
  const std::vector<RuleMatcher> matchers = PrepareRules(rules, &result.rule_instances_unusable);
  result.nodes_before = OnnxNodeCount(model);
  result.rule_instances = static_cast<int>(matchers.size());

  pipeline::Announce(options, "fusions", absl::StrCat(model.graph.num_nodes(), " nodes"));
  ASSIGN_OR_RETURN(const Graph activations, FuseSpelledActivations(model.graph));
  ASSIGN_OR_RETURN(const Graph separated, pipeline::PrepareFused(activations));
  pipeline::Announce(options, "search", absl::StrCat(matchers.size(), " rule instances"));
  pipeline::EngineRun search = pipeline::MakeSearchEngine(options, costs)->Search(separated, matchers);
  OfferUnprovedRewrites(activations, search.found, options, search.alternatives);
  ASSIGN_OR_RETURN(const Graph cleaned, pipeline::FinishGraph(separated));
  pipeline::SelfChecker checker(model.graph, options.seed);
  const StageInputs in{model.graph, separated, cleaned, checker};
  ASSIGN_OR_RETURN(Checked checked, CheckedOutput(in, search.found, costs, options));
  RETURN_IF_ERROR(costs.MeasuredStatus());  // the costs above are all the search asked for
  std::unique_ptr<RuntimeTimer> owned_timer;
  std::string unverifiable;
  RuntimeTimer* timer = pipeline::SpeedTimer(options, costs, model, in.cleaned, owned_timer, &unverifiable);
  const double searched_cost = checked.out.rules_applied.empty() ? search.found.initial_cost : search.found.best_cost;
  ASSIGN_OR_RETURN(pipeline::SpeedChecked speed,
                   pipeline::VerifySpeed(model, in, matchers, search.alternatives, std::move(checked.out),
                                         searched_cost, timer, costs, options));
  // Said only where there was a rewrite to time.
  if (!speed.out.rules_applied.empty()) result.speed_not_verified = unverifiable;
  ASSIGN_OR_RETURN(speed.out,
                   InputAsReadUnlessVerifiable(in, std::move(speed.out), result.speed_not_verified, costs, options));
  if (!speed.timing_failed.empty()) result.speed_not_verified = speed.timing_failed;  // the input as read already
  Estimated estimated = EstimateWritten(model, in, std::move(speed.out), speed.check, costs, options);
  ASSIGN_OR_RETURN(estimated, InputWhereRegionSlower(in, std::move(estimated), costs, options));
  ASSIGN_OR_RETURN(PricedOutput priced, InputAsReadUnlessRewritesPay(in, std::move(estimated.out), costs, options));
  ASSIGN_OR_RETURN(result.measured, Measure(model.graph, priced.out.run_graph, costs, options));

  result.search = std::move(search.found);
  result.engine = std::move(search.stats);
  result.dropped_search_gain = checked.dropped_search_gain;
  result.rejected_rules = std::move(checked.rejected_rules);
  result.rejection = std::move(checked.rejection);
  result.speed_check = std::move(speed.check);
  result.region_estimate = std::move(estimated.estimate);
  result.estimated_slower = priced.estimated_slower;
  result.cost_sources = costs.Sources();
  DescribeWritten(model, std::move(priced.out), result);
  RETURN_IF_ERROR(pipeline::DecideSymbolicDims(model, options, result.model, result));
  RETURN_IF_ERROR(CheckAtLargerSizes(model, in, costs, options, result));
  result.nodes_after = OnnxNodeCount(result.model);
  DescribeChanges(rules, result);
  return result;
}

}  // namespace taso
