#include "taso/passes/einsum_products.h"

#include <string>
#include <vector>

#include "taso/ir/graph_copy.h"
#include "taso/ir/ops/einsum.h"
#include "taso/ir/ops/names.h"
#include "taso/ir/status_macros.h"

namespace taso {
namespace {

// Whether any node of `graph` is an Einsum: most models have none, and are not copied.
bool HasEinsum(const Graph& graph) {
  for (NodeId n = 0; n < graph.num_nodes(); ++n)
    if (graph.node(n).op != nullptr && graph.node(n).op->name() == op_names::kEinsum) return true;
  return false;
}

}  // namespace

absl::StatusOr<EinsumsLowered> LowerEinsumsToProducts(const Graph& graph) {
  if (!HasEinsum(graph)) return EinsumsLowered{graph, 0};
  ASSIGN_OR_RETURN(const std::vector<NodeId> order, graph.TopologicalOrder());
  GraphCopy copy(graph);
  RETURN_IF_ERROR(copy.CopyInputs());
  const auto fresh = [&](absl::string_view base) { return copy.FreshName(base, NameStyle::kBaseThenNumbered); };
  int lowered = 0;
  for (NodeId n : order) {
    const Node& node = graph.node(n);
    if (node.op != nullptr && node.op->name() == op_names::kEinsum) {
      ASSIGN_OR_RETURN(const ValueId a, copy.Use(node.inputs[0]));
      ASSIGN_OR_RETURN(const ValueId b, copy.Use(node.inputs[1]));
      ASSIGN_OR_RETURN(const std::optional<ValueId> product,
                       ops::AddEinsumAsMatMul(graph, n, copy.graph(), a, b, graph.value(node.outputs[0]).name, fresh));
      if (product) {
        copy.Replace(node.outputs[0], *product);
        ++lowered;
        continue;
      }
    }
    RETURN_IF_ERROR(copy.CopyNode(n));
  }
  if (lowered == 0) return EinsumsLowered{graph, 0};
  ASSIGN_OR_RETURN(Graph lowered_graph, copy.Finish());
  return EinsumsLowered{std::move(lowered_graph), lowered};
}

}  // namespace taso
