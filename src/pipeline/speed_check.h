// Never slower, measured: the model about to be written is timed against the input end to
// end in the target's runtime (a RuntimeTimer). When it is not measurably faster, the
// search's rewrites are dropped a group at a time (the rewrites of one rule form a group),
// each group kept only when the model with it runs measurably faster than without; when
// what is left is still not measurably faster than the input, no rewrite is kept. Once
// the timer's time is spent (RuntimeTimer::OutOfTime) the choices left are made without
// timing, towards the input: untimed groups are dropped.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "taso/backends/runtime_timer.h"
#include "taso/onnx/onnx_io.h"
#include "taso/pipeline/pipeline.h"

namespace taso::pipeline {

// The model as written with the rewrites marked in `keep` (one flag per rewrite).
using BuildWithRewrites = std::function<absl::StatusOr<OnnxModel>(const std::vector<bool>& keep)>;

struct SpeedChoice {
  std::vector<bool> keep;            // per rewrite
  PipelineResult::SpeedCheck check;  // the input against the model with `keep`
};

// Where no rewrite is kept: whether the model with none is timed against the input for
// the report (the model written), or the choice's timing stays the last one made (when
// the caller writes something else anyway).
enum class WhenNoneKept { kTimeTheInput, kReportTheLastTiming };

// `groups` names, per rewrite, the group it is dropped with. Fails when a model cannot be
// built or timed; a failure of the timer itself is marked so (IsTimingFailure).
absl::StatusOr<SpeedChoice> ChooseFasterRewrites(RuntimeTimer& timer, const OnnxModel& input,
                                                 const std::vector<std::string>& groups, const BuildWithRewrites& build,
                                                 WhenNoneKept when_none = WhenNoneKept::kTimeTheInput);

// Whether ChooseFasterRewrites failed in its timer (its runtime gone, as when the system
// ends it for memory, or a model it cannot load or run) rather than building a model.
bool IsTimingFailure(const absl::Status& status);

}  // namespace taso::pipeline
