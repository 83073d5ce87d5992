#include "taso/egraph/rule_selection.h"

#include <algorithm>

#include "taso/ir/executor.h"
#include "taso/ir/ops/concat.h"

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

// Per rule tensor (the rule's inputs, then its source operators' outputs): the source
// operator computing it, or -1 for an input.
std::vector<int> SourceProducers(const Rule& rule) {
  std::vector<int> producer(rule.inputs.size(), -1);
  for (size_t i = 0; i < rule.source.ops.size(); ++i)
    producer.insert(producer.end(), rule.source.ops[i].num_outputs, static_cast<int>(i));
  return producer;
}

// Whether the source has several roots (operators none of whose outputs another source
// operator reads) and also an operator that is not one.
bool EntangledMultiPattern(const Rule& rule) {
  const std::vector<RuleOp>& ops = rule.source.ops;
  const std::vector<int> producer = SourceProducers(rule);
  std::vector<bool> read(ops.size(), false);
  for (const RuleOp& op : ops)
    for (int t : op.inputs)
      if (producer[t] >= 0) read[producer[t]] = true;
  const auto roots = std::count(read.begin(), read.end(), false);
  return roots > 1 && roots < static_cast<long>(ops.size());
}

// Whether the source's one output is a Concat of two outputs of source operators of one
// operator.
bool JoinsTwoResults(const Rule& rule) {
  const std::vector<RuleOp>& ops = rule.source.ops;
  if (rule.source.outputs.size() != 1) return false;
  const std::vector<int> producer = SourceProducers(rule);
  const int root = producer[rule.source.outputs[0]];
  if (root < 0 || !ops::IsConcat(*ops[root].op) || ops[root].inputs.size() != 2) return false;
  const int a = producer[ops[root].inputs[0]], b = producer[ops[root].inputs[1]];
  return a >= 0 && b >= 0 && a != b && ops[a].op == ops[b].op;
}

// Whether the source has several outputs, computed by operators reading one tensor in
// common (two products of one input, or through one weight): a merge of work on one
// tensor. Two operators on unrelated tensors joined would copy both into one first.
bool MergesWorkOnATensor(const Rule& rule) {
  if (rule.source.outputs.size() < 2) return false;
  std::vector<int> readers(rule.inputs.size(), 0);  // per rule input: source operators reading it
  for (const RuleOp& op : rule.source.ops)
    for (size_t t = 0; t < rule.inputs.size(); ++t)
      if (std::find(op.inputs.begin(), op.inputs.end(), static_cast<int>(t)) != op.inputs.end() && ++readers[t] > 1)
        return true;
  return false;
}

}  // namespace

std::vector<bool> JoinsWork(const std::vector<RuleMatcher>& rules) {
  std::vector<bool> joins(rules.size(), false);
  for (size_t r = 0; r < rules.size(); ++r)
    joins[r] = MergesWorkOnATensor(rules[r].rule()) || JoinsTwoResults(rules[r].rule());
  return joins;
}

std::vector<bool> RedundantInEGraph(const std::vector<RuleMatcher>& rules) {
  std::vector<bool> found(rules.size(), false);
  for (size_t r = 0; r < rules.size(); ++r) {
    const Rule& rule = rules[r].rule();
    found[r] =
        EntangledMultiPattern(rule) || RecomputesATensor(rule, rule.source) || RecomputesATensor(rule, rule.target);
  }
  return found;
}

}  // namespace taso::egraph
