#include "taso/rewrite/cost.h"

#include <algorithm>

namespace taso {

double AnalyticCost::NodeCost(const Graph& graph, NodeId n) {
  const Node& node = graph.node(n);
  return Estimate(node.op->Metrics(node.params, graph.InputInfos(node), graph.OutputTypes(node)));
}

double AnalyticCost::Estimate(const OpMetrics& m) const {
  return std::max(m.flops / machine_.flops_per_second, m.bytes / machine_.bytes_per_second) + machine_.launch_seconds;
}

bool IsWeightOnlyNode(const Node& node, const std::vector<bool>& weight_only_values) {
  if (node.op->is_opaque()) return false;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ValueId v = node.inputs[i];
    if (v != kNoValue && !node.op->reads_only_shape_of(static_cast<int>(i)) && !weight_only_values[v]) return false;
  }
  return true;
}

WeightOnly FindWeightOnly(const Graph& graph) {
  WeightOnly w{std::vector<bool>(graph.num_nodes(), false), std::vector<bool>(graph.num_values(), false)};
  for (ValueId v = 0; v < graph.num_values(); ++v) w.values[v] = graph.value(v).is_constant();
  auto order = graph.TopologicalOrder();
  if (!order.ok()) return w;
  for (NodeId n : *order) {
    const Node& node = graph.node(n);
    if (!IsWeightOnlyNode(node, w.values)) continue;
    w.nodes[n] = true;
    for (ValueId v : node.outputs) w.values[v] = true;
  }
  return w;
}

double CostModel::TotalCost(const Graph& graph) {
  const std::vector<bool> weight_only = FindWeightOnly(graph).nodes;
  double total = 0;
  for (NodeId n = 0; n < graph.num_nodes(); ++n)
    if (!weight_only[n]) total += NodeCost(graph, n);
  return total;
}

AnalyticCost::Machine OperatorsAtMeanPrice(CostModel& target, const Graph& graph) {
  AnalyticCost::Machine machine;
  const std::vector<bool> weight_only = FindWeightOnly(graph).nodes;
  double total = 0;
  int priced = 0;
  for (NodeId n = 0; n < graph.num_nodes(); ++n) {
    if (weight_only[n]) continue;
    const double price = target.NodeCost(graph, n);
    if (!(price > 0)) continue;
    total += price;
    ++priced;
  }
  if (priced > 0) machine.launch_seconds = total / priced;
  return machine;
}

}  // namespace taso
