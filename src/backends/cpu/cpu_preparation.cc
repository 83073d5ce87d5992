#include "taso/backends/cpu_preparation.h"

#include <algorithm>

#include "backends/cpu/cpu_kernel.h"
#include "taso/backends/layouts.h"
#include "taso/ir/ops/layout_convert.h"
#include "taso/ir/status_macros.h"
#include "taso/passes/fold.h"
#include "taso/passes/inference_fusion.h"

namespace taso {
namespace {

bool CarriesLayouts(const Graph& graph) {
  for (NodeId n = 0; n < graph.num_nodes(); ++n)
    if (cpu::IsBlocked(graph.node(n).params) || graph.node(n).op == &ops::LayoutConvertOp()) return true;
  return false;
}

}  // namespace

absl::StatusOr<CpuPreparation> PrepareForCpu(const Graph& graph, CpuCost& cost) {
  CpuPreparation p;
  ASSIGN_OR_RETURN(const Graph folded, FoldWeights(graph));
  ASSIGN_OR_RETURN(p.graph, FuseIntoConvolutions(folded));
  p.fused_nodes = std::max(0, folded.num_nodes() - p.graph.num_nodes());
  CpuLayouts layouts(cost);
  if (CarriesLayouts(p.graph)) {
    p.estimate_seconds = cost.TotalCost(p.graph);
    return p;
  }
  const CpuLayouts::Plan plan = layouts.Choose(p.graph);
  ASSIGN_OR_RETURN(p.graph, layouts.Apply(p.graph, plan));
  p.blocked_nodes = static_cast<int>(std::count(plan.blocked.begin(), plan.blocked.end(), true));
  p.conversions = plan.conversions;
  p.estimate_seconds = plan.seconds;
  return p;
}

}  // namespace taso
