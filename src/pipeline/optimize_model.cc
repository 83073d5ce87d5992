// OptimizeModel: the stages in order, each a function of its own.
#include <algorithm>
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
#include "pipeline/speed_check.h"
#include "pipeline/symbolic_dims.h"
#include "taso/backends/cpu_preparation.h"
#include "taso/backends/executor_timer.h"
#include "taso/backends/layouts.h"
#include "taso/backends/ort_timer.h"
#include "taso/ir/join_pieces.h"
#include "taso/ir/memory_limit.h"
#include "taso/ir/status_macros.h"
#include "taso/passes/activation_fusion.h"
#include "taso/passes/fold.h"
#include "taso/passes/inference_fusion.h"
#include "taso/passes/pass_list.h"
#include "taso/passes/rewrite_gated_mixtures.h"
#include "taso/passes/row_form.h"
#include "taso/pipeline/pipeline.h"

namespace taso {

namespace {

using pipeline::CostModels;

void Announce(const PipelineOptions& options, absl::string_view stage, absl::string_view detail) {
  if (options.on_stage) options.on_stage(stage, detail);
}

// Refuses, before any work, what the later stages could not do.
absl::Status CheckPreconditions(const Graph& graph, const PipelineOptions& options) {
  RETURN_IF_ERROR(ValidateOptions(options));
  RETURN_IF_ERROR(CheckGraphMemory(graph, options.max_memory_bytes));
  if (options.self_check) RETURN_IF_ERROR(pipeline::CheckSelfCheckCanRun(graph));
  if (options.measure_runs > 0) RETURN_IF_ERROR(pipeline::CheckMeasurable(graph));
  return absl::OkStatus();
}

// After spelled-out activations became one operator (FuseSpelledActivations): batch
// normalizations, biases and relus are folded into the convolutions, then each bias is
// set apart again so that the rules (whose convolutions have none) match; products of
// activations of rank above 2 by a matrix are computed on their rows, as the rules state
// them. kAfterSearch undoes the last two after the search.
constexpr GraphPass kBeforeSearch[] = {
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

absl::StatusOr<Graph> PrepareFused(const Graph& activations) { return RunPasses(kBeforeSearch, activations); }
absl::StatusOr<Graph> FinishGraph(const Graph& searched) { return RunPasses(kAfterSearch, searched); }

// With the engine the options name; returns its other graphs worth timing, for the speed
// check.
std::vector<egraph::Alternative> SearchSubstitutions(const Graph& graph, const std::vector<RuleMatcher>& matchers,
                                                     CostModels& costs, const PipelineOptions& options,
                                                     PipelineResult& result) {
  pipeline::EngineRun run = pipeline::MakeSearchEngine(options, costs)->Search(graph, matchers);
  result.search = std::move(run.found);
  result.engine = std::move(run.stats);
  return std::move(run.alternatives);
}

// Mixtures of experts merged (rewrite_gated_mixtures.h), a rewrite no rule states, offered
// to the speed check as the first graph to time after the search's own: it is written only
// where it passes the self-check and runs measurably faster. The merge reads the input at
// its rank, its activations fused, and is then prepared as the search's input was. Nothing
// where no speed check runs, or where the merge cannot be built (it is an offer: the model
// is optimized without it). `activations`: the input with its activations fused, as the
// search's input was made from it.
void OfferMergedMixtures(const Graph& activations, const PipelineOptions& options,
                         std::vector<egraph::Alternative>& alternatives) {
  if (!options.verify_speed) return;
  absl::StatusOr<GatedMixturesMerged> merged = MergeGatedMixtures(activations);
  if (!merged.ok() || merged->mixtures == 0) return;
  absl::StatusOr<Graph> prepared = PrepareFused(merged->graph);
  if (!prepared.ok()) return;
  egraph::Alternative offered{*std::move(prepared), {{std::string(kGatedMixtureRewrite), merged->mixtures}},
                              std::string(kGatedMixturesMerged)};
  alternatives.insert(alternatives.begin(), std::move(offered));
}

// A gain within the measurements' noise is no reason to rewrite the user's graph: then
// the search's input is kept and no rule counts as applied. Returns the graph kept.
const Graph& KeepInputUnlessGain(const Graph& input, PipelineResult& result) {
  SearchFound& search = result.search;
  const bool keep_input = search.best_cost > search.initial_cost * (1 - kMinSearchGain);
  if (!keep_input) return search.best;
  result.substitutions_dropped = !search.rules_applied.empty();
  search.rules_applied.clear();
  search.path.clear();
  return input;
}

// The graphs both ends of the pipeline work from: as imported, and as the search starts
// (fused, biases set apart) with its lossless clean-up (`cleaned`: FinishGraph of it).
struct Inputs {
  const Graph& imported;
  const Graph& separated;
  const Graph& cleaned;
  pipeline::SelfChecker& checker;  // of graphs against `imported`
};

struct CostEstimate {
  double before = 0, after = 0;  // seconds, by the backend's cost model
};

// `optimized`, and the input as the backend runs it: ONNX Runtime folds and fuses into its
// convolutions what our lossless clean-up does (`cleaned`), the cpu runtime prepares a
// graph read from a file (cpu_preparation.h), the cuda executor runs the graph as it is.
absl::StatusOr<CostEstimate> EstimateCosts(const Inputs& in, const Graph& optimized, CostModels& costs,
                                           const PipelineOptions& options) {
  CostModel& backend = *costs.backend;
  CostEstimate estimate;
  estimate.after = backend.TotalCost(optimized);
  if (options.backend == Backend::kCpu && costs.cpu != nullptr) {
    ASSIGN_OR_RETURN(const CpuPreparation prepared, PrepareForCpu(in.imported, *costs.cpu));
    estimate.before = prepared.estimate_seconds;
    return estimate;
  }
  estimate.before = backend.TotalCost(options.backend == Backend::kOrt ? in.cleaned : in.imported);
  return estimate;
}

void Record(const CostEstimate& estimate, PipelineResult& result) {
  result.cost_before = estimate.before;
  result.cost_after = estimate.after;
}

// What the backend's executor runs: the optimized graph at its layouts, when they are
// searched (with the layouts' record, and their cost, which is then the graph's cost
// after), else as it is.
struct LaidOut {
  Graph graph;
  std::optional<PipelineResult::Layouts> layouts;
  double seconds = 0;
};
absl::StatusOr<LaidOut> ApplyLayouts(const Graph& optimized, CostModels& costs, const PipelineOptions& options) {
  if (options.search == SearchKind::kSubstitutions) return LaidOut{optimized, std::nullopt, 0};
  Announce(options, "layouts", absl::StrCat(optimized.num_nodes(), " nodes"));
  CpuLayouts layouts(*costs.cpu);
  const CpuLayouts::Plan plan = layouts.Choose(optimized);
  ASSIGN_OR_RETURN(Graph laid_out, layouts.Apply(optimized, plan));
  PipelineResult::Layouts record{.conversions = plan.conversions};
  for (bool blocked : plan.blocked) record.blocked_nodes += blocked;
  return LaidOut{std::move(laid_out), record, plan.seconds};
}

// What the self-check found; nothing where it is off.
absl::StatusOr<std::optional<SelfCheckCoverage>> RunSelfCheck(const Inputs& in, const Graph& optimized,
                                                              const PipelineOptions& options) {
  if (!options.self_check) return std::nullopt;
  Announce(options, "self-check", "both graphs on the reference kernels");
  return in.checker.Check(optimized);
}

// The graph to write, and what the backend's executor runs (it at its layouts).
struct Output {
  Graph graph, run_graph;
};

// Finishes the searched graph (weights folded, fusions back), prices it, lays it out and
// checks it against the imported one.
absl::StatusOr<Output> FinishAndCheck(const Inputs& in, const Graph& searched, CostModels& costs,
                                      const PipelineOptions& options, PipelineResult& result) {
  ASSIGN_OR_RETURN(Graph optimized, FinishGraph(searched));
  ASSIGN_OR_RETURN(const CostEstimate estimate, EstimateCosts(in, optimized, costs, options));
  Record(estimate, result);
  ASSIGN_OR_RETURN(LaidOut laid_out, ApplyLayouts(optimized, costs, options));
  if (laid_out.layouts) {
    result.layouts = laid_out.layouts;
    result.cost_after = laid_out.seconds;
  }
  ASSIGN_OR_RETURN(result.self_check, RunSelfCheck(in, optimized, options));
  return Output{std::move(optimized), std::move(laid_out.graph)};
}

std::string Mismatch(const PipelineResult& result) {
  return result.self_check ? result.self_check->mismatch : std::string();
}

// The input as read, its weight-only nodes folded and nothing else, checked and priced
// as the input (the runtime runs it as it runs the input): what is written where no
// rewrite is. The search's lossless clean-up (spelled-out activations fused,
// normalizations folded into convolutions) is no rewrite any runtime was timed on:
// ONNX Runtime and the cpu runtime do it themselves, and the cuda executor, which runs a
// graph as it is, ran BERT's cleaned-up input 8x slower when it had no Gelu kernel, and
// ResNet-50's 0.89x.
absl::StatusOr<Output> AsReadOutput(const Inputs& in, CostModels& costs, const PipelineOptions& options,
                                    PipelineResult& result) {
  ASSIGN_OR_RETURN(Graph as_read, FoldWeights(in.imported));
  ASSIGN_OR_RETURN(const CostEstimate estimate, EstimateCosts(in, as_read, costs, options));
  Record(CostEstimate{estimate.before, estimate.before}, result);
  Graph run_graph = as_read;
  if (options.search != SearchKind::kSubstitutions && costs.cpu != nullptr) {  // as the cpu runtime lays it out
    ASSIGN_OR_RETURN(CpuPreparation prepared, PrepareForCpu(in.imported, *costs.cpu));
    run_graph = std::move(prepared.graph);
    result.layouts = PipelineResult::Layouts{prepared.blocked_nodes, prepared.conversions};
  }
  ASSIGN_OR_RETURN(result.self_check, RunSelfCheck(in, as_read, options));
  if (!Mismatch(result).empty())
    return absl::InternalError(absl::StrCat("self-check failed: ", Mismatch(result), "; nothing written"));
  return Output{std::move(as_read), std::move(run_graph)};
}

// The searched graph, finished and checked; the input as read where the search kept no
// rewrite. Where the self-check finds the searched graph different, the search's rewrites
// are dropped and the input as read is checked and returned instead.
absl::StatusOr<Output> CheckedOutput(const Inputs& in, CostModels& costs, const PipelineOptions& options,
                                     PipelineResult& result) {
  const Graph& searched = KeepInputUnlessGain(in.separated, result);
  if (result.search.rules_applied.empty()) return AsReadOutput(in, costs, options, result);
  ASSIGN_OR_RETURN(Output out, FinishAndCheck(in, searched, costs, options, result));
  if (Mismatch(result).empty()) return out;
  result.rejected_rules = std::exchange(result.search.rules_applied, {});
  result.search.path.clear();
  result.rejection = Mismatch(result);
  return AsReadOutput(in, costs, options, result);
}

// The timer of the speed check: the options', else the target's runtime: ONNX Runtime on
// the ort target, our executor on cpu and cuda where it can run the input (every node in
// the operator library); null where the speed is not verified. `owned` keeps one made here.
RuntimeTimer* SpeedTimer(const PipelineOptions& options, const CostModels& costs, const Graph& input,
                         std::unique_ptr<RuntimeTimer>& owned) {
  if (!options.verify_speed) return nullptr;
  if (options.timer != nullptr) return options.timer;
  if (options.target == Target::kOrt) {
    if (costs.ort_worker == nullptr) return nullptr;
    owned = std::make_unique<OrtTimer>(costs.ort_worker, options.ort_threads,
                                       PairLimits{.seconds = options.verify_speed_seconds});
  } else {
    if (!pipeline::CheckMeasurable(input).ok()) return nullptr;
    const Backend executor = options.target == Target::kCuda ? Backend::kCuda : Backend::kCpu;
    owned = std::make_unique<ExecutorTimer>(std::string(BackendName(executor)),
                                            PairLimits{.seconds = options.verify_speed_seconds}, costs.cpu);
  }
  return owned.get();
}

// Times the checked output against the input in the target's runtime and returns what to
// write: with only the search's rewrites that make it measurably faster
// (speed_check.h), finished and checked again when that is a subset.
absl::StatusOr<Output> VerifyRewrites(const OnnxModel& model, const Inputs& in,
                                      const std::vector<RuleMatcher>& matchers, Output out, RuntimeTimer* timer,
                                      CostModels& costs, const PipelineOptions& options, PipelineResult& result) {
  if (timer == nullptr || result.search.rules_applied.empty()) return out;
  Announce(options, "speed check", absl::StrCat("in ", timer->name()));
  const SearchFound& search = result.search;
  auto build = [&](const std::vector<bool>& keep) -> absl::StatusOr<OnnxModel> {
    if (std::find(keep.begin(), keep.end(), false) == keep.end()) return InShellOf(model, out.graph);
    ASSIGN_OR_RETURN(const Graph replayed, ReplayRewrites(in.separated, matchers, search.path, keep));
    ASSIGN_OR_RETURN(Graph finished, FinishGraph(replayed));
    return InShellOf(model, std::move(finished));
  };
  std::vector<std::string> groups;
  for (const AppliedRewrite& step : search.path) groups.push_back(matchers[step.matcher].rule().name);
  // A search that applied rules without recording them can be undone only as a whole.
  if (search.path.empty()) groups.push_back("the search's graph");
  ASSIGN_OR_RETURN(const pipeline::SpeedChoice choice, pipeline::ChooseFasterRewrites(*timer, model, groups, build));
  result.speed_check = choice.check;
  if (choice.check.rewrites_kept == choice.check.rewrites) return out;
  if (choice.check.rewrites_kept == 0) {
    result.search.rules_applied.clear();
    result.search.path.clear();
    return AsReadOutput(in, costs, options, result);
  }
  std::map<std::string, int> applied;
  ASSIGN_OR_RETURN(const Graph replayed,
                   search.path.empty() ? absl::StatusOr<Graph>(in.separated)
                                       : ReplayRewrites(in.separated, matchers, search.path, choice.keep, &applied));
  result.search.rules_applied = std::move(applied);
  ASSIGN_OR_RETURN(Output kept, FinishAndCheck(in, replayed, costs, options, result));
  if (!Mismatch(result).empty())
    return absl::InternalError(absl::StrCat("self-check failed: ", Mismatch(result), "; nothing written"));
  return kept;
}

// The speed check's record once an alternative was timed (`choice`), kept or not; the
// alternative's own check describes the run when it is kept or nothing was timed before
// (the search kept the input).
PipelineResult::SpeedCheck AfterAlternative(const std::optional<PipelineResult::SpeedCheck>& earlier,
                                            const pipeline::SpeedChoice& choice, const std::string& pricing) {
  PipelineResult::SpeedCheck check = earlier && !choice.keep[0] ? *earlier : choice.check;
  if (choice.keep[0]) check.extraction = pricing;
  check.comparisons = choice.check.comparisons + (earlier ? earlier->comparisons : 0);
  check.other_extractions_timed = 1 + (earlier ? earlier->other_extractions_timed : 0);
  return check;
}

// Whether the alternative's finished graph runs measurably faster than `rival`'s (the
// search's graph, kept by the speed check); the timing counts in `result`.
absl::StatusOr<bool> BeatsRival(const OnnxModel& model, const Output& alternative, const Output& rival,
                                const std::string& pricing, RuntimeTimer& timer, PipelineResult& result) {
  const OnnxModel rival_model = InShellOf(model, rival.graph);
  auto build = [&](const std::vector<bool>& keep) -> absl::StatusOr<OnnxModel> {
    return InShellOf(model, keep[0] ? alternative.graph : rival.graph);
  };
  ASSIGN_OR_RETURN(const pipeline::SpeedChoice choice,
                   pipeline::ChooseFasterRewrites(timer, rival_model, {pricing}, build,
                                                  pipeline::WhenNoneKept::kReportTheLastTiming));
  result.speed_check->comparisons += choice.check.comparisons;
  if (!choice.keep[0]) ++result.speed_check->other_extractions_timed;
  return choice.keep[0];
}

// The alternative finished, checked and timed against the input as a whole; returned
// (with `result` describing it) only when it passes the self-check and runs measurably
// faster, and than `rival` too where one is given (the search's graph the speed check
// kept). Otherwise `result` is left as it was, but for the timings counted.
absl::StatusOr<std::optional<Output>> TryAlternative(const OnnxModel& model, const Inputs& in,
                                                     const egraph::Alternative& alternative, const Output* rival,
                                                     RuntimeTimer& timer, CostModels& costs,
                                                     const PipelineOptions& options, PipelineResult& result) {
  PipelineResult trial = result;
  trial.search.best = alternative.graph;
  trial.search.best_cost = costs.search().TotalCost(alternative.graph);
  trial.search.rules_applied = alternative.rules_applied;
  trial.search.path.clear();
  ASSIGN_OR_RETURN(Output out, FinishAndCheck(in, alternative.graph, costs, options, trial));
  if (!Mismatch(trial).empty()) return std::nullopt;  // never written, so not reported
  Announce(options, "speed check", absl::StrCat(pipeline::AlternativeName(alternative.pricing), ", in ", timer.name()));
  if (rival != nullptr) {
    ASSIGN_OR_RETURN(const bool beats, BeatsRival(model, out, *rival, alternative.pricing, timer, result));
    if (!beats) return std::nullopt;
  }
  auto build = [&](const std::vector<bool>& keep) -> absl::StatusOr<OnnxModel> {
    return InShellOf(model, keep[0] ? out.graph : in.cleaned);
  };
  // The input's own graph is timed for the report only where no timing was reported yet.
  const auto when_none =
      result.speed_check ? pipeline::WhenNoneKept::kReportTheLastTiming : pipeline::WhenNoneKept::kTimeTheInput;
  ASSIGN_OR_RETURN(const pipeline::SpeedChoice choice,
                   pipeline::ChooseFasterRewrites(timer, model, {alternative.pricing}, build, when_none));
  PipelineResult::SpeedCheck check = AfterAlternative(result.speed_check, choice, alternative.pricing);
  check.beat_search = choice.keep[0] && rival != nullptr;
  if (choice.keep[0]) result = std::move(trial);
  result.speed_check = std::move(check);
  if (!choice.keep[0]) return std::nullopt;
  return out;
}

// VerifyRewrites, then the e-graph's other extractions in turn: where no rewrite of the
// search's result pays, the first measurably faster than the input is written; where
// the search's result is kept, one measurably faster than it (and than the input).
absl::StatusOr<Output> VerifySpeed(const OnnxModel& model, const Inputs& in, const std::vector<RuleMatcher>& matchers,
                                   const std::vector<egraph::Alternative>& alternatives, Output out,
                                   RuntimeTimer* timer, CostModels& costs, const PipelineOptions& options,
                                   PipelineResult& result) {
  ASSIGN_OR_RETURN(out, VerifyRewrites(model, in, matchers, std::move(out), timer, costs, options, result));
  if (timer == nullptr) return out;
  for (size_t i = 0; i < alternatives.size(); ++i) {
    const egraph::Alternative& alternative = alternatives[i];
    if (timer->OutOfTime()) {
      if (result.speed_check) result.speed_check->other_extractions_untimed = alternatives.size() - i;
      break;
    }
    const bool search_kept = result.speed_check && result.speed_check->rewrites_kept > 0;
    ASSIGN_OR_RETURN(std::optional<Output> faster, TryAlternative(model, in, alternative, search_kept ? &out : nullptr,
                                                                  *timer, costs, options, result));
    if (faster) return std::move(*faster);
  }
  return out;
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

// On a measured backend, the written graph's estimate from its differing regions timed in
// the target's runtime (region_estimate.h): a sum of operators timed one at a time misses
// what a whole run costs between and around them. A stand-in timer times them instead
// where it does not time the speed check (whose comparisons it counts).
void EstimateWritten(const OnnxModel& model, const Inputs& in, const Output& written, CostModels& costs,
                     const PipelineOptions& options, PipelineResult& result) {
  // The input as read (no rewrite written) runs as the cleaned-up input does in the
  // runtimes, which fold and fuse as our clean-up does: then nothing differs.
  const Graph& graph = result.search.rules_applied.empty() ? in.cleaned : written.graph;
  if (options.timer != nullptr) {
    if (!options.verify_speed)
      pipeline::EstimateByRegions(model, in.cleaned, graph, *costs.backend, *options.timer, *options.timer, result);
    return;
  }
  std::optional<RegionTimers> timers = MakeRegionTimers(in.cleaned, costs, options);
  if (!timers) return;
  Announce(options, "estimate", absl::StrCat("the regions that differ, in ", timers->region->name()));
  pipeline::EstimateByRegions(model, in.cleaned, graph, *costs.backend, *timers->region, *timers->share, result);
}

// Without the speed check, the timing of the regions that differ is the one measurement of
// the written graph in the target's runtime: where the search's region runs measurably
// slower than the input's, no rewrite is written: the input is written instead (as read,
// AsReadOutput) and checked as any output.
absl::StatusOr<Output> InputWhereRegionSlower(const Inputs& in, Output out, CostModels& costs,
                                              const PipelineOptions& options, PipelineResult& result) {
  if (options.verify_speed || !result.region_estimate) return out;
  const PairTiming& timing = result.region_estimate->timing;
  if (!timing.Resolved() || timing.ratio() >= 1) return out;
  PipelineResult::RegionEstimate estimate = *std::exchange(result.region_estimate, std::nullopt);
  result.search.rules_applied.clear();
  result.search.path.clear();
  ASSIGN_OR_RETURN(Output input, AsReadOutput(in, costs, options, result));
  estimate.input_written = true;
  result.region_estimate = std::move(estimate);
  return input;
}

// Without the speed check, rewrites priced above the input as read are dropped and the
// input as read is written (`estimated_slower` says so): the search starts from the
// cleaned-up graph, which can price above the input. Every other path that writes no
// rewrite has written the input as read already (AsReadOutput).
absl::StatusOr<Output> InputAsReadUnlessRewritesPay(const Inputs& in, Output out, CostModels& costs,
                                                    const PipelineOptions& options, PipelineResult& result) {
  if (result.search.rules_applied.empty() || result.speed_check || result.cost_after < result.cost_before) return out;
  result.estimated_slower = PipelineResult::EstimatedSlower{result.cost_after, result.cost_before};
  result.search.rules_applied.clear();
  result.search.path.clear();
  return AsReadOutput(in, costs, options, result);
}

// On the backend's executor: cuda's on the cuda backend, the cpu's otherwise, where the
// input runs as the cpu runtime prepares it (cpu_preparation.h) when a cpu cost model
// can choose its layouts.
absl::StatusOr<std::optional<PipelineResult::Measurement>> Measure(const Graph& imported, const Graph& run_graph,
                                                                   CostModels& costs, const PipelineOptions& options) {
  if (options.measure_runs <= 0) return std::nullopt;
  const Backend executor = options.backend == Backend::kCuda ? Backend::kCuda : Backend::kCpu;
  Announce(options, "measuring", absl::StrCat(options.measure_runs, " runs of each graph"));
  std::optional<CpuPreparation> prepared;
  if (executor == Backend::kCpu && costs.cpu != nullptr) {
    ASSIGN_OR_RETURN(prepared, PrepareForCpu(imported, *costs.cpu));
  }
  return pipeline::MeasureBoth(executor, prepared ? prepared->graph : imported, run_graph, options.measure_runs);
}

// A model none of whose nodes the library computes (one all of float16, say) is returned
// as it is, but for its constant nodes, which become initializers (those the import made
// of shape arithmetic included); those nothing reads any more are not written.
PipelineResult Unchanged(const OnnxModel& model) {
  PipelineResult result;
  result.model = model;
  if (absl::StatusOr<Graph> folded = FoldWeights(model.graph); folded.ok()) result.model.graph = *std::move(folded);
  result.nodes_before = OnnxNodeCount(model);
  result.nodes_after = OnnxNodeCount(result.model);
  result.left_alone = pipeline::LeftAlone(model.graph);
  result.nothing_to_optimize = true;
  return result;
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
  if (!pipeline::HasLibraryComputation(model.graph)) return Unchanged(model);
  ASSIGN_OR_RETURN(CostModels costs, pipeline::MakeCostModels(options));
  PipelineResult result;
  const std::vector<RuleMatcher> matchers = PrepareRules(rules, &result.rule_instances_unusable);
  result.nodes_before = OnnxNodeCount(model);
  result.rule_instances = static_cast<int>(matchers.size());

  Announce(options, "fusions", absl::StrCat(model.graph.num_nodes(), " nodes"));
  ASSIGN_OR_RETURN(const Graph activations, FuseSpelledActivations(model.graph));
  ASSIGN_OR_RETURN(const Graph separated, PrepareFused(activations));
  Announce(options, "search", absl::StrCat(matchers.size(), " rule instances"));
  std::vector<egraph::Alternative> alternatives = SearchSubstitutions(separated, matchers, costs, options, result);
  OfferMergedMixtures(activations, options, alternatives);
  ASSIGN_OR_RETURN(const Graph cleaned, FinishGraph(separated));
  pipeline::SelfChecker checker(model.graph, options.seed);
  const Inputs in{model.graph, separated, cleaned, checker};
  ASSIGN_OR_RETURN(Output out, CheckedOutput(in, costs, options, result));
  RETURN_IF_ERROR(costs.MeasuredStatus());  // the costs above are all the search asked for
  std::unique_ptr<RuntimeTimer> owned_timer;
  ASSIGN_OR_RETURN(out, VerifySpeed(model, in, matchers, alternatives, std::move(out),
                                    SpeedTimer(options, costs, in.cleaned, owned_timer), costs, options, result));
  EstimateWritten(model, in, out, costs, options, result);
  ASSIGN_OR_RETURN(out, InputWhereRegionSlower(in, std::move(out), costs, options, result));
  ASSIGN_OR_RETURN(out, InputAsReadUnlessRewritesPay(in, std::move(out), costs, options, result));
  ASSIGN_OR_RETURN(result.measured, Measure(model.graph, out.run_graph, costs, options));

  result.cost_sources = costs.Sources();
  result.model = InShellOf(model, std::move(out.graph));
  result.model.external_data = model.external_data;
  RETURN_IF_ERROR(pipeline::DecideSymbolicDims(model, options, result.model, result));
  result.nodes_after = OnnxNodeCount(result.model);
  DescribeChanges(rules, result);
  return result;
}

}  // namespace taso
