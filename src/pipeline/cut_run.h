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
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
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
  // The values RunPart::keep asked for, where the run computed or was given them.
  absl::flat_hash_map<ValueId, Tensor<float>> kept;
  int nodes_run = 0;  // library nodes run
};

// The part of a graph a cut run computes, where another graph's run computes the rest
// (SelfChecker). The default runs the whole graph and records every check point.
struct RunPart {
  std::vector<bool> nodes;  // per node: the library nodes to run; empty: all of them
  // Values given rather than computed (what the other graph's run made of them).
  absl::flat_hash_map<ValueId, const Tensor<float>*> given;
  std::vector<ValueId> keep;  // returned in CutRun::kept rather than freed
  // Check points copied from `alike`'s record of the same key rather than recorded.
  const CutRun* alike = nullptr;
  absl::flat_hash_set<std::string> alike_keys;
  bool record = true;  // false: no check point is recorded (a run for `keep` only)
};

// A float32 value of known shape: what the reference kernels compute (the others a cut
// run reads as constants, or compares by source).
bool Computable(const Value& v);

// The check points of `graph` by key ("output 'y'", "input 1 of opaque node 'f'"), each
// with the value recorded there, in no particular order.
std::vector<std::pair<std::string, ValueId>> CheckPoints(const Graph& graph);

// The opaque nodes by the name check points give them (their first output's), each with
// its ONNX operator type.
std::map<std::string, std::string> OpaqueNodes(const Graph& graph);

// The opaque nodes' float32 outputs of known shape, by value name: random in
// [-scale, scale] from `seed`, in the graph's topological order.
absl::StatusOr<TensorMap> RandomOpaqueOutputs(const Graph& graph, uint64_t seed, double scale = 1.0);

// Runs the library nodes of `graph` (those of `part`) on `inputs` (float32 run-time inputs,
// by name) and `opaque_outputs`; fails naming a library node that reads a value the run
// does not have (an opaque output of unknown shape or type, never fed).
absl::StatusOr<CutRun> RunAroundOpaque(const Graph& graph, const TensorMap& inputs, const TensorMap& opaque_outputs,
                                       const RunPart& part = {});

}  // namespace taso::pipeline
