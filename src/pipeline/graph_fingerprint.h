// A fingerprint of a graph's computation that every process computes alike, for keys kept
// on disk (Graph::StructuralHash is salted per process): SHA-256 over the operators,
// their parameters, the inputs' types by position and the weights' contents, whatever
// the names and the order nodes were added in.
#pragma once

#include <string>

#include "taso/graph.h"

namespace taso::pipeline {

// Hex digits; empty where the graph has a cycle.
std::string GraphFingerprint(const Graph& graph);

}  // namespace taso::pipeline
