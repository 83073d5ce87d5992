// BuildEGraph: a graph's nodes as e-nodes, in dependency order.
#include "taso/egraph/egraph.h"
#include "taso/ir/status_macros.h"

namespace taso::egraph {

absl::StatusOr<GraphEGraph> BuildEGraph(const Graph& graph) {
  GraphEGraph out;
  out.value_class.assign(graph.num_values(), kNoClass);
  EGraph& eg = out.egraph;
  for (ValueId v : graph.inputs()) out.value_class[v] = eg.AddLeaf(graph, v);
  for (ValueId v : graph.weights()) out.value_class[v] = eg.AddLeaf(graph, v);
  ASSIGN_OR_RETURN(const std::vector<NodeId> order, graph.TopologicalOrder());
  for (NodeId n : order) {
    const Node& node = graph.node(n);
    std::vector<ClassId> children;
    for (ValueId v : node.inputs) children.push_back(v == kNoValue ? kNoClass : out.value_class[v]);
    std::vector<ClassId> outs;
    if (node.op->is_opaque()) {
      outs = eg.AddOpaque(n, node.op, std::move(children), graph.OutputTypes(node));
    } else {
      ASSIGN_OR_RETURN(outs, eg.AddOp(node.op, node.params, std::move(children)));
    }
    for (size_t k = 0; k < outs.size() && k < node.outputs.size(); ++k) {
      out.value_class[node.outputs[k]] = outs[k];
      eg.NameClass(outs[k], node.outputs[k]);
    }
  }
  eg.Rebuild();
  return out;
}

}  // namespace taso::egraph
