// The speed check as a stage of OptimizeModel (speed_check.h chooses the rewrites that
// pay): the checked output timed against the input in the target's runtime, then the
// e-graph's other extractions, and what is written with the check's record.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pipeline/cost_setup.h"
#include "pipeline/stage_output.h"
#include "taso/backends/runtime_timer.h"
#include "taso/egraph/engine.h"
#include "taso/onnx/onnx_io.h"
#include "taso/pipeline/pipeline.h"
#include "taso/rewrite/match.h"

namespace taso::pipeline {

// The speed check's output and record (none where the speed is not verified).
struct SpeedChecked {
  StageOutput out;
  std::optional<PipelineResult::SpeedCheck> check;
  // Where the timer itself failed (its runtime gone, as when the system ends it for its
  // memory, or a model it cannot load or run) and nothing was timed: why. `out` is then
  // the input as read: a rewrite that was not timed is not written, and the run is not
  // lost to its timing. Where the timer fails on one of the other graphs after the
  // search's was timed, that graph is counted untimed and what was kept stands.
  std::string timing_failed;
};

// The timer of the speed check: the options', else the target's runtime: ONNX Runtime on
// the ort target, our executor on cpu and cuda where it can run the input (`input` in
// `model`'s shell: every node in the operator library once its shape arithmetic is
// folded at its sizes); null where the speed is not verified. `owned` keeps one made here.
// Where the speed is to be verified and no timer can be made, `unverifiable` (if given)
// says why.
RuntimeTimer* SpeedTimer(const PipelineOptions& options, const CostModels& costs, const OnnxModel& model,
                         const Graph& input, std::unique_ptr<RuntimeTimer>& owned, std::string* unverifiable = nullptr);

// The checked output `out` timed against the input in the target's runtime, with only the
// search's rewrites that make it measurably faster (finished and checked again when that
// is a subset); then the other graphs (the e-graph's other extractions, rewrites offered
// to the check) in turn: where no rewrite of the search's result pays, the first
// measurably faster than the input is written; where the search's result is kept, one
// measurably faster than it (and than the input). Those the search's cost model prices
// measurably below `out` (`search_cost`: its price there) are timed before it instead,
// cheapest first, each against the input. Returns `out` as it is, and no record, where
// `timer` is null; the input as read where the timer fails (SpeedChecked::timing_failed).
absl::StatusOr<SpeedChecked> VerifySpeed(const OnnxModel& model, const StageInputs& in,
                                         const std::vector<RuleMatcher>& matchers,
                                         const std::vector<egraph::Alternative>& alternatives, StageOutput out,
                                         double search_cost, RuntimeTimer* timer, CostModels& costs,
                                         const PipelineOptions& options);

}  // namespace taso::pipeline
