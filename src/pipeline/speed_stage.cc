#include "pipeline/speed_stage.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "pipeline/change_summary.h"
#include "pipeline/output_checks.h"
#include "pipeline/speed_check.h"
#include "taso/backends/executor_timer.h"
#include "taso/backends/ort_timer.h"
#include "taso/ir/status_macros.h"
#include "taso/onnx/onnx_static_copy.h"

namespace taso::pipeline {

namespace {

// The speed check's stage: what the model references and times, and its record so far.
struct SpeedStage {
  const OnnxModel& model;
  const StageInputs& in;
  const std::vector<RuleMatcher>& matchers;
  RuntimeTimer& timer;
  CostModels& costs;
  const PipelineOptions& options;
  double search_cost;  // of the search's graph, by the search's cost model
  std::optional<PipelineResult::SpeedCheck> check;
};

// The record of a timing that follows others already made (other graphs timed first, none
// kept): it describes that timing, and counts the earlier ones too.
PipelineResult::SpeedCheck AfterEarlierTimings(const std::optional<PipelineResult::SpeedCheck>& earlier,
                                               PipelineResult::SpeedCheck check) {
  if (!earlier) return check;
  check.comparisons += earlier->comparisons;
  check.other_extractions_timed += earlier->other_extractions_timed;
  return check;
}

// Times the checked output against the input in the target's runtime and returns what to
// write: with only the search's rewrites that make it measurably faster
// (speed_check.h), finished and checked again when that is a subset.
absl::StatusOr<StageOutput> VerifyRewrites(SpeedStage& stage, StageOutput out) {
  if (out.rules_applied.empty()) return out;
  Announce(stage.options, "speed check",
           absl::StrFormat("the search's graph (priced %.4f ms by the search's costs), in %s", stage.search_cost * 1e3,
                           stage.timer.name()));
  const StageInputs& in = stage.in;
  auto build = [&](const std::vector<bool>& keep) -> absl::StatusOr<OnnxModel> {
    if (std::find(keep.begin(), keep.end(), false) == keep.end()) return InShellOf(stage.model, out.graph);
    ASSIGN_OR_RETURN(const Graph replayed, ReplayRewrites(in.separated, stage.matchers, out.path, keep));
    ASSIGN_OR_RETURN(Graph finished, FinishGraph(replayed));
    return InShellOf(stage.model, std::move(finished));
  };
  std::vector<std::string> groups;
  for (const AppliedRewrite& step : out.path) groups.push_back(stage.matchers[step.matcher].rule().name);
  // A search that applied rules without recording them can be undone only as a whole.
  if (out.path.empty()) groups.push_back("the search's graph");
  ASSIGN_OR_RETURN(const pipeline::SpeedChoice choice,
                   pipeline::ChooseFasterRewrites(stage.timer, stage.model, groups, build));
  stage.check = AfterEarlierTimings(stage.check, choice.check);
  if (choice.check.rewrites_kept == choice.check.rewrites) return out;
  if (choice.check.rewrites_kept == 0) return AsReadOutput(in, stage.costs, stage.options);
  std::map<std::string, int> applied;
  ASSIGN_OR_RETURN(const Graph replayed,
                   out.path.empty() ? absl::StatusOr<Graph>(in.separated)
                                    : ReplayRewrites(in.separated, stage.matchers, out.path, choice.keep, &applied));
  ASSIGN_OR_RETURN(StageOutput kept,
                   FinishAndCheck(in, replayed, std::move(applied), out.path, stage.costs, stage.options));
  if (!kept.Mismatch().empty())
    return absl::InternalError(absl::StrCat("self-check failed: ", kept.Mismatch(), "; nothing written"));
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
// search's graph, kept by the speed check); the timing counts in the stage's record.
absl::StatusOr<bool> BeatsRival(SpeedStage& stage, const StageOutput& alternative, const StageOutput& rival,
                                const std::string& pricing) {
  const OnnxModel rival_model = InShellOf(stage.model, rival.graph);
  auto build = [&](const std::vector<bool>& keep) -> absl::StatusOr<OnnxModel> {
    return InShellOf(stage.model, keep[0] ? alternative.graph : rival.graph);
  };
  ASSIGN_OR_RETURN(const pipeline::SpeedChoice choice,
                   pipeline::ChooseFasterRewrites(stage.timer, rival_model, {pricing}, build,
                                                  pipeline::WhenNoneKept::kReportTheLastTiming));
  stage.check->comparisons += choice.check.comparisons;
  if (!choice.keep[0]) ++stage.check->other_extractions_timed;
  return choice.keep[0];
}

// An alternative graph with its price in the search's cost model.
struct PricedAlternative {
  const egraph::Alternative* alternative;
  double search_cost;
};

// The alternatives the search's cost model prices measurably below the search's own
// graph (`search_cost`: by kMinSearchGain), cheapest first; and the others, in their order.
std::pair<std::vector<PricedAlternative>, std::vector<PricedAlternative>> SplitByPrice(
    const std::vector<egraph::Alternative>& alternatives, double search_cost, CostModel& search) {
  std::vector<PricedAlternative> cheaper, others;
  for (const egraph::Alternative& a : alternatives) {
    const PricedAlternative priced{&a, search.TotalCost(a.graph)};
    (priced.search_cost < search_cost * (1 - kMinSearchGain) ? cheaper : others).push_back(priced);
  }
  std::stable_sort(cheaper.begin(), cheaper.end(), [](const PricedAlternative& a, const PricedAlternative& b) {
    return a.search_cost < b.search_cost;
  });
  return {std::move(cheaper), std::move(others)};
}

// A graph the speed check kept, which an alternative must run measurably faster than
// too: the search's (`pricing` empty), or an alternative timed before (its pricing).
struct Rival {
  const StageOutput* output = nullptr;  // none: the input alone is to beat
  std::string pricing;
};

// The alternative finished, checked and timed against the input as a whole; returned
// only when it passes the self-check and runs measurably faster, and than `rival` too
// where one is given. The stage's record counts the timings either way, and describes
// the alternative where it is returned. Where it is not faster, the input is timed for
// the report only if nothing was timed before and `report_input_timing` asks for it.
absl::StatusOr<std::optional<StageOutput>> TryAlternative(SpeedStage& stage, const PricedAlternative& priced,
                                                          const Rival& rival, bool report_input_timing = true) {
  const egraph::Alternative& alternative = *priced.alternative;
  ASSIGN_OR_RETURN(StageOutput out, FinishAndCheck(stage.in, alternative.graph, alternative.rules_applied, {},
                                                   stage.costs, stage.options));
  if (!out.Mismatch().empty()) return std::nullopt;  // never written, so not reported
  out.extraction = StageOutput::Extraction{alternative.graph, priced.search_cost};
  Announce(
      stage.options, "speed check",
      absl::StrFormat("%s (priced %.4f ms by the search's costs), in %s",
                      pipeline::AlternativeName(alternative.pricing), priced.search_cost * 1e3, stage.timer.name()));
  if (rival.output != nullptr) {
    ASSIGN_OR_RETURN(const bool beats, BeatsRival(stage, out, *rival.output, alternative.pricing));
    if (!beats) return std::nullopt;
  }
  auto build = [&](const std::vector<bool>& keep) -> absl::StatusOr<OnnxModel> {
    return InShellOf(stage.model, keep[0] ? out.graph : stage.in.cleaned);
  };
  // The input's own graph is timed for the report only where no timing was reported yet.
  const auto when_none = stage.check || !report_input_timing ? pipeline::WhenNoneKept::kReportTheLastTiming
                                                             : pipeline::WhenNoneKept::kTimeTheInput;
  ASSIGN_OR_RETURN(const pipeline::SpeedChoice choice,
                   pipeline::ChooseFasterRewrites(stage.timer, stage.model, {alternative.pricing}, build, when_none));
  PipelineResult::SpeedCheck check = AfterAlternative(stage.check, choice, alternative.pricing);
  const bool beat_rival = choice.keep[0] && rival.output != nullptr;
  check.beat_search = beat_rival && rival.pricing.empty();
  if (beat_rival && !rival.pricing.empty()) check.beat_other = rival.pricing;
  stage.check = std::move(check);
  if (!choice.keep[0]) return std::nullopt;
  return out;
}

// The speed check's line where its timer failed.
std::string TimingFailed(const RuntimeTimer& timer, const absl::Status& failure) {
  return absl::StrCat(timer.name(), " could not time the models: ", failure.message());
}

// TryAlternative; where the timer fails on the alternative (ONNX Runtime cannot load it,
// or its worker is gone) nothing, counted untimed, `failure` saying why: what the check
// kept before it stands.
absl::StatusOr<std::optional<StageOutput>> TryTimedAlternative(SpeedStage& stage, const PricedAlternative& priced,
                                                               const Rival& rival, bool report_input_timing,
                                                               size_t& untimed, std::string& failure) {
  absl::StatusOr<std::optional<StageOutput>> tried = TryAlternative(stage, priced, rival, report_input_timing);
  if (tried.ok() || !IsTimingFailure(tried.status())) return tried;
  ++untimed;
  failure = TimingFailed(stage.timer, tried.status());
  return std::nullopt;
}

// `alternatives` in turn, each against the fastest graph kept so far: `first` (the
// search's graph where the check kept a rewrite of it; none: the input alone) until one
// runs measurably faster than it (and than the input), then that one, which each later
// one replaces where measurably faster than it too. The last one kept, or nullopt. A
// later alternative can beat an earlier one that was faster than the input: prices one
// operator at a time put the four experts at 32 tokens merged 1% above an extraction
// that joined only their first layers, which the merge beat by 24% in ONNX Runtime, and
// an e-graph round from the first round's graph builds on it (a LoRA attention's three
// projections merged once the first round folded their adapters).
absl::StatusOr<std::optional<StageOutput>> FastestOf(SpeedStage& stage,
                                                     const std::vector<PricedAlternative>& alternatives,
                                                     const Rival& first, bool report_input_timing, size_t& untimed,
                                                     std::string& failure) {
  std::optional<StageOutput> fastest;
  std::string fastest_pricing;
  for (const PricedAlternative& alternative : alternatives) {
    if (stage.timer.OutOfTime()) {
      ++untimed;
      continue;
    }
    const Rival rival = fastest ? Rival{&*fastest, fastest_pricing} : first;
    ASSIGN_OR_RETURN(std::optional<StageOutput> faster,
                     TryTimedAlternative(stage, alternative, rival, report_input_timing, untimed, failure));
    if (!faster) continue;
    fastest = std::move(faster);
    fastest_pricing = alternative.alternative->pricing;
  }
  return fastest;
}

// The fastest of the alternatives priced measurably below the search's graph (cheapest
// first), whose graph is written where there is one. Else VerifyRewrites, then the
// fastest of the search's graph (where a rewrite of it pays) and the other alternatives
// is written. The cheaper ones go first because the check's time may not last for all:
// a large model's comparisons take seconds each.
absl::StatusOr<SpeedChecked> TimeAndChoose(const OnnxModel& model, const StageInputs& in,
                                           const std::vector<RuleMatcher>& matchers,
                                           const std::vector<egraph::Alternative>& alternatives, StageOutput out,
                                           double search_cost, RuntimeTimer* timer, CostModels& costs,
                                           const PipelineOptions& options) {
  SpeedStage stage{model, in, matchers, *timer, costs, options, search_cost, std::nullopt};
  const auto [cheaper, others] = SplitByPrice(alternatives, search_cost, costs.search());
  const bool search_to_time = !out.rules_applied.empty();
  size_t untimed = 0;
  std::string failure;
  // The cheaper ones against the input: the search's graph is not timed before them.
  ASSIGN_OR_RETURN(std::optional<StageOutput> fastest,
                   FastestOf(stage, cheaper, Rival{}, /*report_input_timing=*/!search_to_time, untimed, failure));
  if (fastest) {
    stage.check->timed_before_search = search_to_time;
    stage.check->other_extractions_untimed = static_cast<int>(untimed);
    return SpeedChecked{std::move(*fastest), std::move(stage.check)};
  }
  ASSIGN_OR_RETURN(out, VerifyRewrites(stage, std::move(out)));
  const bool search_kept = stage.check && stage.check->rewrites_kept > 0;
  ASSIGN_OR_RETURN(fastest, FastestOf(stage, others, Rival{search_kept ? &out : nullptr, ""},
                                      /*report_input_timing=*/true, untimed, failure));
  if (stage.check) stage.check->other_extractions_untimed = static_cast<int>(untimed);
  if (fastest) return SpeedChecked{std::move(*fastest), std::move(stage.check)};
  SpeedChecked checked{std::move(out), std::move(stage.check)};
  // Nothing timed, the search's graph being the input's: said where the timer failed.
  if (!checked.check) checked.timing_failed = failure;
  return checked;
}

}  // namespace

// The timer of the speed check: the options', else the target's runtime: ONNX Runtime on
// the ort target, our executor on cpu and cuda where it can run the input (every node in
// the operator library); null where the speed is not verified. `owned` keeps one made here.
RuntimeTimer* SpeedTimer(const PipelineOptions& options, const CostModels& costs, const OnnxModel& model,
                         const Graph& input, std::unique_ptr<RuntimeTimer>& owned, std::string* unverifiable) {
  if (!options.verify_speed) return nullptr;
  if (options.timer != nullptr) return options.timer;
  if (options.target == Target::kOrt) {
    if (costs.ort_worker == nullptr) {
      if (unverifiable != nullptr) *unverifiable = "ONNX Runtime is not running";
      return nullptr;
    }
    owned = std::make_unique<OrtTimer>(costs.ort_worker, options.ort_threads,
                                       PairLimits{.seconds = options.verify_speed_seconds});
    return owned.get();
  }
  const Backend executor = options.target == Target::kCuda ? Backend::kCuda : Backend::kCpu;
  auto timer = std::make_unique<ExecutorTimer>(std::string(BackendName(executor)),
                                               PairLimits{.seconds = options.verify_speed_seconds}, costs.cpu);
  // A graph of library nodes alone runs; one with others is made runnable here, once.
  const bool all_library = FirstOpaqueNode(input).empty();
  if (const absl::StatusOr<const Graph*> runnable = all_library ? &input : timer->AsRun(InShellOf(model, input));
      !runnable.ok()) {
    if (unverifiable != nullptr)
      *unverifiable =
          absl::StrCat("our ", BackendName(executor), " executor cannot run the input: ", runnable.status().message());
    return nullptr;
  }
  owned = std::move(timer);
  return owned.get();
}

absl::StatusOr<SpeedChecked> VerifySpeed(const OnnxModel& model, const StageInputs& in,
                                         const std::vector<RuleMatcher>& matchers,
                                         const std::vector<egraph::Alternative>& alternatives, StageOutput out,
                                         double search_cost, RuntimeTimer* timer, CostModels& costs,
                                         const PipelineOptions& options) {
  if (timer == nullptr) return SpeedChecked{std::move(out), std::nullopt};
  absl::StatusOr<SpeedChecked> checked =
      TimeAndChoose(model, in, matchers, alternatives, std::move(out), search_cost, timer, costs, options);
  if (checked.ok() || !IsTimingFailure(checked.status())) return checked;
  ASSIGN_OR_RETURN(StageOutput as_read, AsReadOutput(in, costs, options));
  SpeedChecked failed{std::move(as_read), std::nullopt};
  failed.timing_failed = TimingFailed(*timer, checked.status());
  return failed;
}

}  // namespace taso::pipeline
