#include "taso/rewrite/match.h"

#include <algorithm>

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
      return absl::InvalidArgumentError(
          absl::StrCat("rule ", rule.name, ": the source does not read input ", rule.inputs[i].name));
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

namespace {

// One search for the matches of a rule's source in a graph (RuleMatcher::FindAll): the
// source's operators are bound to nodes one after the other, depth first, each node's
// inputs binding the rule tensors they stand for.
class MatchSearch {
 public:
  MatchSearch(const Rule& rule, const std::vector<GeneratorVariant>& variants, const Graph& graph,
              const GraphIndex& index)
      : src_(rule.source),
        rule_(rule),
        variants_(variants),
        graph_(graph),
        index_(index),
        used_(graph.num_nodes(), false) {
    int num_tensors = static_cast<int>(rule.inputs.size());
    for (const RuleOp& op : src_.ops) {
      first_output_.push_back(num_tensors);
      num_tensors += op.num_outputs;
    }
    is_rule_output_.assign(num_tensors, false);
    for (int o : src_.outputs) is_rule_output_[o] = true;
    m_.nodes.assign(src_.ops.size(), kNoNode);
    m_.tensors.assign(num_tensors, kNoValue);
  }

  std::vector<Match> Run() {
    Extend(0);
    return std::move(found_);
  }

 private:
  // Binds source operator i and those after it, or records a complete legal match.
  void Extend(size_t i) {
    if (i == src_.ops.size()) {
      if (Legal()) found_.push_back(m_);
      return;
    }
    for (NodeId n : Candidates(i)) {
      if (!Fits(i, n)) continue;
      const std::vector<ValueId>& inputs = graph_.node(n).inputs;
      TryNode(i, n, inputs);
      if (variants_[i].commutative && inputs.size() == 2 && inputs[0] != inputs[1])
        TryNode(i, n, {inputs[1], inputs[0]});
    }
  }

  // The nodes that may stand for source operator i: the readers of an input already
  // bound (the last such), else every node of the operator.
  absl::Span<const NodeId> Candidates(size_t i) const {
    ValueId anchor = kNoValue;
    for (int t : src_.ops[i].inputs)
      if (m_.tensors[t] != kNoValue) anchor = m_.tensors[t];
    if (anchor != kNoValue) return index_.uses.readers(anchor);
    auto it = index_.nodes_of.find(src_.ops[i].op);
    if (it == index_.nodes_of.end()) return {};
    return it->second;
  }

  // Whether node n, unused, has source operator i's operator, a rule form, and its
  // number of inputs (all present) and outputs.
  bool Fits(size_t i, NodeId n) const {
    const RuleOp& op = src_.ops[i];
    const Node& node = graph_.node(n);
    if (used_[n] || node.op != op.op || !index_.rule_params[n]) return false;
    if (node.inputs.size() != op.inputs.size() || static_cast<int>(node.outputs.size()) != op.num_outputs) return false;
    return std::find(node.inputs.begin(), node.inputs.end(), kNoValue) == node.inputs.end();
  }

  // Tries node n for source operator i, reading `inputs` in this order.
  void TryNode(size_t i, NodeId n, const std::vector<ValueId>& inputs) {
    std::vector<int> bound;  // rule tensors bound here, unbound on return
    if (BindInputs(i, inputs, bound) && ParamsHold(i, n, inputs)) {
      Bind(i, n);
      Extend(i + 1);
      Unbind(i, n);
    }
    for (int t : bound) m_.tensors[t] = kNoValue;
  }

  // Binds the rule tensors operator i reads to `inputs`; false when one is bound to
  // another value already. Appends the tensors it binds to `bound`.
  bool BindInputs(size_t i, const std::vector<ValueId>& inputs, std::vector<int>& bound) {
    const RuleOp& op = src_.ops[i];
    for (size_t j = 0; j < op.inputs.size(); ++j) {
      const int t = op.inputs[j];
      if (m_.tensors[t] == kNoValue) {
        m_.tensors[t] = inputs[j];
        bound.push_back(t);
      } else if (m_.tensors[t] != inputs[j]) {
        return false;
      }
    }
    return true;
  }

  // Whether the inputs' shapes meet operator i's variant and node n's rule form equals
  // the rule's parameters, resolved at these shapes (split sizes, for example).
  bool ParamsHold(size_t i, NodeId n, const std::vector<ValueId>& inputs) const {
    std::vector<Shape> shapes;
    for (ValueId v : inputs) shapes.push_back(graph_.value(v).shape);
    if (!variants_[i].AcceptsShapes(shapes)) return false;
    auto want =
        ResolvedParams(rule_, src_.ops[i], [&](int t) -> const Shape& { return graph_.value(m_.tensors[t]).shape; });
    return want.ok() && *index_.rule_params[n] == *want;
  }

  void Bind(size_t i, NodeId n) {
    const Node& node = graph_.node(n);
    for (int k = 0; k < src_.ops[i].num_outputs; ++k) m_.tensors[first_output_[i] + k] = node.outputs[k];
    m_.nodes[i] = n;
    used_[n] = true;
  }

  void Unbind(size_t i, NodeId n) {
    used_[n] = false;
    m_.nodes[i] = kNoNode;
    for (int k = 0; k < src_.ops[i].num_outputs; ++k) m_.tensors[first_output_[i] + k] = kNoValue;
  }

  // Interior tensors (the operators' outputs that are no source outputs) are read only
  // inside the match and are no graph outputs.
  bool Legal() const {
    for (size_t i = 0; i < src_.ops.size(); ++i)
      for (int k = 0; k < src_.ops[i].num_outputs; ++k) {
        const int t = first_output_[i] + k;
        if (is_rule_output_[t]) continue;
        const ValueId v = m_.tensors[t];
        if (index_.uses.is_graph_output(v)) return false;
        for (NodeId reader : index_.uses.readers(v))
          if (!used_[reader]) return false;
      }
    return true;
  }

  const RuleGraph& src_;
  const Rule& rule_;
  const std::vector<GeneratorVariant>& variants_;
  const Graph& graph_;
  const GraphIndex& index_;
  std::vector<int> first_output_;     // per source operator: the rule tensor of its first output
  std::vector<bool> is_rule_output_;  // per rule tensor
  std::vector<bool> used_;            // per node: bound in the match so far
  Match m_;                           // the match so far
  std::vector<Match> found_;
};

}  // namespace

std::vector<Match> RuleMatcher::FindAll(const Graph& graph, const GraphIndex& index) const {
  return MatchSearch(rule_, variants_, graph, index).Run();
}

}  // namespace taso
