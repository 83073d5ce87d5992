// The reference executor around opaque nodes, for the self-check. What an opaque node
// computes is unknown here, but the optimizer never changes one: so the graph is cut at
// opaque nodes. Their float outputs are fed given values (the same to both graphs) and
// what reaches their inputs is recorded as a check point, next to the graph outputs.
// Two graphs whose check points agree on the same feeds compute the same, whatever the
// opaque nodes do.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "taso/ir/executor.h"
#include "taso/ir/graph.h"

namespace taso::pipeline {

// What one run records. A check point is named "output 'NAME'" (a graph output) or
// "input I of opaque node 'NAME'", NAME being the opaque node's first output.
struct CutRun {
  TensorMap tensors;  // float32 check points
  // The others (integer, boolean, other float types, unknown shapes): nothing here
  // computes them, so each is named by where it comes from (a weight's content, a value's
  // name) and compared so.
  std::map<std::string, std::string> sources;
};

// The opaque nodes by the name check points give them (their first output's), each with
// its ONNX operator type.
std::map<std::string, std::string> OpaqueNodes(const Graph& graph);

// The opaque nodes' float32 outputs of known shape, by value name: random in
// [-scale, scale] from `seed`, in the graph's topological order.
absl::StatusOr<TensorMap> RandomOpaqueOutputs(const Graph& graph, uint64_t seed, double scale = 1.0);

// Runs the library nodes of `graph` on `inputs` (float32 run-time inputs, by name) and
// `opaque_outputs`; fails naming a library node that reads a value the run does not have
// (an opaque output of unknown shape or type, never fed).
absl::StatusOr<CutRun> RunAroundOpaque(const Graph& graph, const TensorMap& inputs, const TensorMap& opaque_outputs);

}  // namespace taso::pipeline
