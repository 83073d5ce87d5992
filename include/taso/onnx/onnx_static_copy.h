// A model's graph as the executors can run it: a dynamic-axes export keeps its shape
// arithmetic (Shape -> Gather -> Concat -> Reshape) as nodes outside the operator
// library, so that the file written stays dynamic; at the sizes its graph is built at,
// that arithmetic is constants.
#pragma once

#include "absl/status/statusor.h"
#include "taso/ir/graph.h"
#include "taso/onnx/onnx_io.h"

namespace taso {

// The model's graph where it holds no node outside the operator library; else the model
// written at its graph's sizes (without copying its weights) and imported again with its
// shape arithmetic folded, with `base`'s memory limit. Fails where a node outside the
// library is left even so, naming it, or where the model cannot be written or read back.
absl::StatusOr<Graph> RunnableAtItsSizes(const OnnxModel& model, const ImportOptions& base = {});

// The first node of `graph` outside the operator library, as "node 'NAME' (OP_TYPE)";
// empty where there is none.
std::string FirstOpaqueNode(const Graph& graph);

}  // namespace taso
