// The checks both ONNX targets run on a parsed model.
#pragma once

#include "onnx/onnx_pb.h"

namespace taso::fuzz {

// Imports the model (with and without shape-arithmetic folding); what imports must export
// or fail with a Status, the export must import as the same graph, and a small graph of
// library operators must compute the same before and after. Aborts on a finding.
void CheckModel(const onnx::ModelProto& model);

}  // namespace taso::fuzz
