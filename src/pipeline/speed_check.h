// Never slower, measured: the model about to be written is timed against the input end to
// end in the target's runtime (a RuntimeTimer). When it is not measurably faster, the
// search's rewrites are dropped a group at a time (the rewrites of one rule form a group),
// each group kept only when the model with it runs measurably faster than without; when
// what is left is still not measurably faster than the input, no rewrite is kept.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "taso/backends/runtime_timer.h"
#include "taso/onnx_io.h"
#include "taso/pipeline.h"

namespace taso::pipeline {

// The model as written with the rewrites marked in `keep` (one flag per rewrite).
using BuildWithRewrites = std::function<absl::StatusOr<OnnxModel>(const std::vector<bool>& keep)>;

struct SpeedChoice {
  std::vector<bool> keep;            // per rewrite
  PipelineResult::SpeedCheck check;  // the input against the model with `keep`
};

// `groups` names, per rewrite, the group it is dropped with. Fails when a model cannot be
// built or timed.
absl::StatusOr<SpeedChoice> ChooseFasterRewrites(RuntimeTimer& timer, const OnnxModel& input,
                                                 const std::vector<std::string>& groups,
                                                 const BuildWithRewrites& build);

}  // namespace taso::pipeline
