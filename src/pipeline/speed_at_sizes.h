// The speed check at larger sizes. Symbolic dimensions that --input-shape does not give
// are searched and timed at 1, or at the smallest power of two the model builds at, where
// merged products and fewer nodes pay most; but the written model keeps them symbolic and
// runs at any size (a mixture of experts merged at a sequence of 1 ran 1.23x faster there
// and 0.94x at 512). So where the speed check kept a rewritten model that keeps such a
// dimension symbolic, both models are built again with those dimensions larger and timed
// against each other; one measurably slower there, twice in turn, is not written (the
// caller writes the input as read).
//
// The dimensions that grow: those not on an input's first axis where there are any (a
// batch stays where the sequence or the image grows), else those on it. By how much: one
// power of two for all, the largest up to 256 at which the input's predicted time
// (PredictedSeconds) stays within 20 ms (the time a larger size costs to time); below 4,
// nothing is timed and the report says why.
#pragma once

#include <optional>

#include "absl/status/statusor.h"
#include "taso/backends/runtime_timer.h"
#include "taso/ir/graph.h"
#include "taso/onnx/onnx_io.h"
#include "taso/pipeline/pipeline.h"

namespace taso::pipeline {

// Whether the result's written model is a rewritten one the speed check chose (not the
// input as read).
bool SpeedCheckKeptRewrites(const PipelineResult& result);

// A model's time at larger sizes (`grown`, built there), predicted from its time as
// `built`: that time, taken as what does not grow, plus the roofline's price of the work
// that grows (AnalyticCost with no fixed cost per operator). The roofline's rates are
// below ONNX Runtime's, so the prediction errs high: an encoder-decoder measured 0.47 ms at
// 1 frame and 1 token was predicted 11.6 ms at 128 of each and ran in 5.5 ms. Scaling
// the time by the growth once per dimension had made it over 20 ms from 8 of each.
double PredictedSeconds(double built_seconds, const Graph& built, const Graph& grown);

// `written` (result.model, its symbolic dimensions decided) against the input `imported`
// at larger sizes, in `timer`; nullopt where no dimension qualifies. Where the models do
// not build or run there, the check says why and finds nothing slower.
absl::StatusOr<std::optional<PipelineResult::LargerSizesCheck>> TimeAtLargerSizes(const OnnxModel& imported,
                                                                                  const OnnxModel& written,
                                                                                  const PipelineResult& result,
                                                                                  RuntimeTimer& timer,
                                                                                  const PipelineOptions& options);

}  // namespace taso::pipeline
