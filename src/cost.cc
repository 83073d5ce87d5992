#include "taso/cost.h"

#include <algorithm>

namespace taso {

double AnalyticCost::NodeCost(const Graph& graph, NodeId n) {
  const Node& node = graph.node(n);
  std::vector<OutputType> outputs;
  for (ValueId v : node.outputs) {
    const Value& value = graph.value(v);
    outputs.push_back({value.dtype, value.shape, value.shape_known});
  }
  const OpMetrics m = node.op->Metrics(node.params, graph.InputInfos(node), outputs);
  return std::max(m.flops / machine_.flops_per_second, m.bytes / machine_.bytes_per_second) + machine_.launch_seconds;
}

std::vector<bool> WeightOnlyNodes(const Graph& graph) {
  std::vector<bool> weight_only(graph.num_nodes(), false);
  std::vector<bool> known(graph.num_values(), false);  // value computable ahead of time
  for (ValueId v = 0; v < graph.num_values(); ++v) known[v] = graph.value(v).is_weight() && !graph.value(v).is_graph_input;
  auto order = graph.TopologicalOrder();
  if (!order.ok()) return weight_only;
  for (NodeId n : *order) {
    const Node& node = graph.node(n);
    if (node.op->is_opaque()) continue;
    bool all = true;
    for (ValueId v : node.inputs) all &= v == kNoValue || known[v];
    if (!all) continue;
    weight_only[n] = true;
    for (ValueId v : node.outputs) known[v] = true;
  }
  return weight_only;
}

double GraphCost(const Graph& graph, CostModel& model) {
  const std::vector<bool> weight_only = WeightOnlyNodes(graph);
  double total = 0;
  for (NodeId n = 0; n < graph.num_nodes(); ++n)
    if (!weight_only[n]) total += model.NodeCost(graph, n);
  return total;
}

}  // namespace taso
