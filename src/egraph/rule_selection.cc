#include "taso/egraph/rule_selection.h"

#include <algorithm>

#include "taso/executor.h"

namespace taso::egraph {

namespace {

bool SameTensor(const Tensor<float>& a, const Tensor<float>& b) { return a.shape == b.shape && a.data == b.data; }

// Runs one side of the rule on random inputs at its example shapes; true when an
// operator's output equals a tensor computed or given before it.
bool RecomputesATensor(const Rule& rule, const RuleGraph& side) {
  std::vector<Shape> shapes;
  for (const RuleInput& input : rule.inputs) shapes.push_back(input.example_shape);
  absl::StatusOr<Graph> graph = InstantiateRuleGraph(rule, side, shapes);
  if (!graph.ok()) return false;
  const TensorMap given = RandomInputs(*graph, /*seed=*/7);
  std::vector<Tensor<float>> values(graph->num_values());
  std::vector<ValueId> known;
  for (ValueId v : graph->inputs()) {
    auto it = given.find(graph->value(v).name);
    if (it == given.end()) return false;
    values[v] = it->second;
    known.push_back(v);
  }
  for (NodeId n = 0; n < graph->num_nodes(); ++n) {  // InstantiateRuleGraph adds them in order
    const Node& node = graph->node(n);
    if (!RunReferenceNode(*graph, node, values).ok()) return false;
    for (ValueId out : node.outputs)
      for (ValueId before : known)
        if (SameTensor(values[out], values[before])) return true;
    known.insert(known.end(), node.outputs.begin(), node.outputs.end());
  }
  return false;
}

// Whether the source has several roots (operators none of whose outputs another source
// operator reads) and also an operator that is not one.
bool EntangledMultiPattern(const Rule& rule) {
  const std::vector<RuleOp>& ops = rule.source.ops;
  std::vector<int> producer(rule.inputs.size(), -1);
  for (size_t i = 0; i < ops.size(); ++i) producer.insert(producer.end(), ops[i].num_outputs, static_cast<int>(i));
  std::vector<bool> read(ops.size(), false);
  for (const RuleOp& op : ops)
    for (int t : op.inputs)
      if (producer[t] >= 0) read[producer[t]] = true;
  const auto roots = std::count(read.begin(), read.end(), false);
  return roots > 1 && roots < static_cast<long>(ops.size());
}

}  // namespace

std::vector<bool> RedundantInEGraph(const std::vector<RuleMatcher>& rules) {
  std::vector<bool> found(rules.size(), false);
  for (size_t r = 0; r < rules.size(); ++r) {
    const Rule& rule = rules[r].rule();
    found[r] = EntangledMultiPattern(rule) || RecomputesATensor(rule, rule.source) ||
               RecomputesATensor(rule, rule.target);
  }
  return found;
}

}  // namespace taso::egraph
