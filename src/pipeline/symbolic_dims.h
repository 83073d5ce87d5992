// Which of the inputs' symbolic dimensions the written model keeps. The search ran at one
// size of each; a dimension is kept when the optimized graph, built again at two other
// sizes of it, passes the self-check against the original built at the same sizes.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "taso/onnx/onnx_io.h"
#include "taso/pipeline/pipeline.h"

namespace taso::pipeline {

// Decides for each symbolic dimension of `imported` (which must keep its `source`)
// whether `optimized` keeps it, and sets optimized.symbolic_shapes to write the kept ones
// on inputs, outputs and intermediate values. Without the self-check nothing is kept.
absl::Status DecideSymbolicDims(const OnnxModel& imported, const PipelineOptions& options, OnnxModel& optimized,
                                PipelineResult& result);

}  // namespace taso::pipeline
