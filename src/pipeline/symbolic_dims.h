// Which of the inputs' symbolic dimensions the written model keeps. The search ran at one
// size of each; a dimension is kept when the optimized graph, built again at two other
// sizes of it, passes the self-check against the original built at the same sizes.
#pragma once

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "taso/ir/output_agreement.h"
#include "taso/onnx/onnx_io.h"
#include "taso/pipeline/pipeline.h"

namespace taso::pipeline {

// The inputs' range at the other sizes: what differs by size shows at any values, and the
// check at the built size and the end-to-end check at another size in the target's
// runtime take both of kInputScales.
inline constexpr double kSymbolicCheckScale = kInputScales[0];

// Decides for each symbolic dimension of `imported` (which must keep its `source`)
// whether `optimized` keeps it, and sets optimized.symbolic_shapes to write the kept ones
// on inputs, outputs and intermediate values. Without the self-check nothing is kept.
absl::Status DecideSymbolicDims(const OnnxModel& imported, const PipelineOptions& options, OnnxModel& optimized,
                                PipelineResult& result);

// The input as read and the optimized model (as written, its inputs' symbolic dimensions
// named), both built again with the inputs' symbolic dimensions in `sizes` (by
// SymbolicDim::Key) at those sizes, the others at their built sizes.
struct BothAtSizes {
  OnnxModel input, optimized;
};
absl::StatusOr<BothAtSizes> BuildBothAt(const OnnxModel& imported, const OnnxModel& optimized,
                                        const absl::flat_hash_map<std::string, int64_t>& sizes);

}  // namespace taso::pipeline
