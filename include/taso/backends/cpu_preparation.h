// What the cpu target's runtime does to a graph read from a file before it runs it, as
// ONNX Runtime does at session creation: an ONNX file carries neither our convolutions'
// fused activations and biases nor oneDNN's blocked layouts, so a file taso-opt wrote
// for the cpu target would otherwise run without what its estimate priced.
#pragma once

#include "absl/status/statusor.h"
#include "taso/backends/cpu_cost.h"
#include "taso/ir/graph.h"

namespace taso {

struct CpuPreparation {
  Graph graph;
  int fused_nodes = 0;          // nodes folded into convolutions (batch norms, biases, relus)
  int blocked_nodes = 0;        // nodes run in the blocked layout
  int conversions = 0;          // LayoutConvert nodes added
  double estimate_seconds = 0;  // the cost model's price of the graph so prepared
};

// Weight-only subgraphs folded, batch normalizations, per-channel biases and relus folded
// into convolutions (FuseIntoConvolutions), and layouts chosen by `cost` (CpuLayouts).
// A graph that already carries layouts is fused and folded only.
absl::StatusOr<CpuPreparation> PrepareForCpu(const Graph& graph, CpuCost& cost);

}  // namespace taso
