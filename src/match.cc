#include "taso/match.h"

#include <functional>

#include "absl/strings/str_cat.h"

namespace taso {
namespace {

// The generator variant a rule operator was made from: same operator, and the
// variant's parameters as the rule states them (split sizes are added per match).
std::optional<GeneratorVariant> VariantOf(const RuleOp& op) {
  for (const GeneratorVariant& v : op.op->GeneratorVariants()) {
    bool same = true;
    for (const auto& [name, value] : v.params.entries()) {
      auto it = op.params.entries().find(name);
      same &= it != op.params.entries().end() && it->second == value;
    }
    if (same && v.arity == static_cast<int>(op.inputs.size())) return v;
  }
  return std::nullopt;
}

}  // namespace

GraphIndex::GraphIndex(const Graph& graph) : uses(graph), rule_params(graph.num_nodes()) {
  for (NodeId n = 0; n < graph.num_nodes(); ++n) {
    const Node& node = graph.node(n);
    if (!node.op->is_opaque()) rule_params[n] = node.op->RuleParams(node.params, graph.InputInfos(node));
    nodes_of[node.op].push_back(n);
  }
}

absl::StatusOr<RuleMatcher> RuleMatcher::Create(const Rule& rule) {
  if (!rule.vars.empty())
    return absl::InvalidArgumentError(absl::StrCat("rule ", rule.name, " has variables: match its instances"));
  if (rule.source.ops.empty())
    return absl::InvalidArgumentError(absl::StrCat("rule ", rule.name, " has no operators to match"));
  for (int o : rule.source.outputs)
    if (o < static_cast<int>(rule.inputs.size()))
      return absl::InvalidArgumentError(absl::StrCat("rule ", rule.name, " passes an input through"));
  // A match binds the inputs the source reads; the target may read no other.
  std::vector<bool> read(rule.inputs.size(), false);
  for (const RuleOp& op : rule.source.ops)
    for (int t : op.inputs)
      if (t < static_cast<int>(read.size())) read[t] = true;
  for (size_t i = 0; i < read.size(); ++i)
    if (!read[i])
      return absl::InvalidArgumentError(absl::StrCat("rule ", rule.name, ": the source does not read input ",
                                                     rule.inputs[i].name));
  RuleMatcher m;
  m.rule_ = rule;
  for (const RuleOp& op : rule.source.ops) {
    auto v = VariantOf(op);
    if (!v)
      return absl::InvalidArgumentError(absl::StrCat("rule ", rule.name, ": ", op.op->name(), "{", op.params.ToString(),
                                                     "} is no operator variant taso-gen makes"));
    m.variants_.push_back(*v);
  }
  return m;
}

std::vector<Match> RuleMatcher::FindAll(const Graph& graph, const GraphIndex& index) const {
  const RuleGraph& src = rule_.source;
  const int num_inputs = static_cast<int>(rule_.inputs.size());
  int num_tensors = num_inputs;
  std::vector<int> first_output;  // per source op: its first tensor id
  for (const RuleOp& op : src.ops) {
    first_output.push_back(num_tensors);
    num_tensors += op.num_outputs;
  }
  std::vector<bool> is_rule_output(num_tensors, false);
  for (int o : src.outputs) is_rule_output[o] = true;

  std::vector<Match> found;
  Match m;
  m.nodes.assign(src.ops.size(), kNoNode);
  m.tensors.assign(num_tensors, kNoValue);
  std::vector<bool> used(graph.num_nodes(), false);

  // Interior tensors are read only inside the match and are no graph outputs.
  auto legal = [&] {
    for (size_t i = 0; i < src.ops.size(); ++i)
      for (int k = 0; k < src.ops[i].num_outputs; ++k) {
        const int t = first_output[i] + k;
        if (is_rule_output[t]) continue;
        const ValueId v = m.tensors[t];
        if (index.uses.is_graph_output(v)) return false;
        for (NodeId reader : index.uses.readers(v))
          if (!used[reader]) return false;
      }
    return true;
  };

  // Tries `node` for source operator i with its inputs in the given order.
  std::function<void(size_t)> extend;
  auto try_node = [&](size_t i, NodeId n, const std::vector<ValueId>& inputs) {
    const RuleOp& op = src.ops[i];
    std::vector<int> bound;  // rule inputs bound here, unbound on return
    bool ok = true;
    for (size_t j = 0; j < op.inputs.size() && ok; ++j) {
      const int t = op.inputs[j];
      if (m.tensors[t] == kNoValue) {
        m.tensors[t] = inputs[j];
        bound.push_back(t);
      } else {
        ok = m.tensors[t] == inputs[j];
      }
    }
    if (ok) {
      std::vector<Shape> shapes;
      for (ValueId v : inputs) shapes.push_back(graph.value(v).shape);
      ok = variants_[i].AcceptsShapes(shapes);
    }
    if (ok) {
      // Split sizes and other symbolic parameters follow from the matched shapes.
      auto want = ResolvedParams(rule_, op, [&](int t) -> const Shape& { return graph.value(m.tensors[t]).shape; });
      ok = want.ok() && *index.rule_params[n] == *want;
    }
    if (ok) {
      const Node& node = graph.node(n);
      for (int k = 0; k < op.num_outputs; ++k) m.tensors[first_output[i] + k] = node.outputs[k];
      m.nodes[i] = n;
      used[n] = true;
      extend(i + 1);
      used[n] = false;
      m.nodes[i] = kNoNode;
      for (int k = 0; k < op.num_outputs; ++k) m.tensors[first_output[i] + k] = kNoValue;
    }
    for (int t : bound) m.tensors[t] = kNoValue;
  };

  extend = [&](size_t i) {
    if (i == src.ops.size()) {
      if (legal()) found.push_back(m);
      return;
    }
    const RuleOp& op = src.ops[i];
    // Candidates: readers of an input already matched, else every node.
    std::vector<NodeId> candidates;
    ValueId anchor = kNoValue;
    for (int t : op.inputs)
      if (m.tensors[t] != kNoValue) anchor = m.tensors[t];
    if (anchor != kNoValue) {
      candidates = index.uses.readers(anchor);
    } else if (auto it = index.nodes_of.find(op.op); it != index.nodes_of.end()) {
      candidates = it->second;
    }
    for (NodeId n : candidates) {
      const Node& node = graph.node(n);
      if (used[n] || node.op != op.op || !index.rule_params[n]) continue;
      if (node.inputs.size() != op.inputs.size() || static_cast<int>(node.outputs.size()) != op.num_outputs) continue;
      bool present = true;
      for (ValueId v : node.inputs) present &= v != kNoValue;
      if (!present) continue;
      try_node(i, n, node.inputs);
      if (variants_[i].commutative && node.inputs.size() == 2 && node.inputs[0] != node.inputs[1])
        try_node(i, n, {node.inputs[1], node.inputs[0]});
    }
  };
  extend(0);
  return found;
}

}  // namespace taso
