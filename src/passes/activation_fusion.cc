#include "taso/passes/activation_fusion.h"

#include <optional>
#include <vector>

#include "taso/ir/graph_copy.h"
#include "taso/ir/ops/gelu.h"
#include "taso/ir/status_macros.h"

namespace taso {

absl::StatusOr<Graph> FuseSpelledActivations(const Graph& graph) {
  const UseIndex uses(graph);
  std::vector<std::optional<ops::SpelledGelu>> ending_at(graph.num_nodes());  // by the node computing y
  std::vector<bool> spelled(graph.num_nodes(), false);
  bool any = false;
  for (NodeId n = 0; n < graph.num_nodes(); ++n) {
    std::optional<ops::SpelledGelu> gelu = ops::MatchSpelledGelu(graph, uses, n);
    if (!gelu) continue;
    for (NodeId part : gelu->nodes) spelled[part] = true;
    ending_at[gelu->nodes.back()] = std::move(gelu);
    any = true;
  }
  if (!any) return graph;
  ASSIGN_OR_RETURN(const std::vector<NodeId> order, graph.TopologicalOrder());
  GraphCopy copy(graph);
  RETURN_IF_ERROR(copy.CopyInputs());
  for (NodeId n : order) {
    if (const std::optional<ops::SpelledGelu>& gelu = ending_at[n]) {
      ASSIGN_OR_RETURN(const ValueId x, copy.Use(gelu->x));
      ASSIGN_OR_RETURN(
          const std::vector<ValueId> y,
          copy.graph().AddNode(&ops::GeluOp(), Params(), {x}, graph.node(n).name, {graph.value(gelu->y).name}));
      copy.Replace(gelu->y, y[0]);
    } else if (!spelled[n]) {
      RETURN_IF_ERROR(copy.CopyNode(n));
    }
  }
  return copy.Finish();
}

}  // namespace taso
