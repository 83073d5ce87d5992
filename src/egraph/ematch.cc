#include "taso/egraph/ematch.h"

#include <algorithm>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"

namespace taso::egraph {

namespace {

using Clock = std::chrono::steady_clock;

// The e-nodes a source operator bound first is tried against: those of its operator,
// of the rule's form where the rule fixes the operator's parameters.
const std::vector<ENodeId>& AllCandidates(const EGraph& eg, const RuleOp& op) {
  return op.sizes.empty() ? eg.NodesOfForm(op.op, op.params) : eg.NodesOf(op.op);
}

// The order in which a rule's source operators are bound: the one with fewest candidate
// e-nodes first, then always an operator connected to those bound, producers of a bound
// tensor before readers of one (an e-class holds few e-nodes, a class may have many
// parents), so that no other operator is tried against every e-node of its kind.
std::vector<int> MatchOrder(const EGraph& eg, const Rule& rule) {
  const std::vector<RuleOp>& ops = rule.source.ops;
  const int num_inputs = static_cast<int>(rule.inputs.size());
  std::vector<int> producer;  // per rule tensor: the source operator computing it, or -1
  producer.assign(num_inputs, -1);
  for (size_t i = 0; i < ops.size(); ++i) producer.insert(producer.end(), ops[i].num_outputs, static_cast<int>(i));
  std::vector<bool> placed(ops.size(), false), known(producer.size(), false);
  std::vector<int> order;
  auto place = [&](int i) {
    placed[i] = true;
    order.push_back(i);
    for (int t : ops[i].inputs) known[t] = true;
    for (size_t t = 0; t < producer.size(); ++t) known[t] = known[t] || producer[t] == i;
  };
  int first = 0;
  for (size_t i = 1; i < ops.size(); ++i)
    if (AllCandidates(eg, ops[i]).size() < AllCandidates(eg, ops[first]).size()) first = static_cast<int>(i);
  place(first);
  while (order.size() < ops.size()) {
    int next = -1;
    for (size_t t = 0; t < producer.size() && next < 0; ++t)
      if (known[t] && producer[t] >= 0 && !placed[producer[t]]) next = producer[t];
    for (size_t i = 0; i < ops.size() && next < 0; ++i)
      if (!placed[i] && std::any_of(ops[i].inputs.begin(), ops[i].inputs.end(), [&](int t) { return known[t]; }))
        next = static_cast<int>(i);
    for (size_t i = 0; i < ops.size() && next < 0; ++i)
      if (!placed[i]) next = static_cast<int>(i);
    place(next);
  }
  return order;
}

// One search for the matches of a rule's source: depth first over the source's
// operators in MatchOrder, with e-classes in place of values.
class EMatchSearch {
  using Bound = absl::InlinedVector<int, 8>;

 public:
  EMatchSearch(const EGraph& egraph, const RuleMatcher& rule, Clock::time_point deadline, int64_t max_matches)
      : eg_(egraph),
        rule_(rule.rule()),
        src_(rule.rule().source),
        variants_(rule.variants()),
        deadline_(deadline),
        max_matches_(max_matches),
        order_(MatchOrder(egraph, rule_)),
        scratch_(src_.ops.size()) {
    int num_tensors = static_cast<int>(rule_.inputs.size());
    producer_bits_.assign(num_tensors, 0);
    for (const RuleOp& op : src_.ops) {
      first_output_.push_back(num_tensors);
      num_tensors += op.num_outputs;
      producer_bits_.insert(producer_bits_.end(), op.num_outputs, egraph.OpBits(op.op));
    }
    m_.nodes.assign(src_.ops.size(), kNoENode);
    m_.tensors.assign(num_tensors, kNoClass);
  }

  std::vector<EMatch> Run() {
    if (AnOperatorIsAbsent()) return {};
    Extend(0);
    return std::move(found_);
  }

 private:
  // Whether some source operator has no e-node at all: then the rule cannot match.
  bool AnOperatorIsAbsent() const {
    for (const RuleOp& op : src_.ops)
      if (eg_.NodesOf(op.op).empty()) return true;
    return false;
  }

  // Binds the depth-th operator of the match order to each e-node that fits, in turn.
  void Extend(size_t depth) {
    if (stopped_) return;
    if (depth == order_.size()) {
      if (!SizedParamsHold()) return;
      found_.push_back(m_);
      stopped_ = static_cast<int64_t>(found_.size()) >= max_matches_;
      return;
    }
    if (++steps_ % 1024 == 0 && Clock::now() > deadline_) {
      stopped_ = true;
      return;
    }
    const int i = order_[depth];
    for (ENodeId n : Candidates(depth)) {
      if (!Fits(i, n)) continue;
      const std::vector<ClassId>& children = eg_.node(n).children;
      TryNode(depth, n, children);
      if (variants_[i].commutative && children.size() == 2 && children[0] != children[1]) {
        const ClassId swapped[2] = {children[1], children[0]};
        TryNode(depth, n, swapped);
      }
    }
  }

  // The e-nodes that may stand for the depth-th operator: where one of its outputs is
  // bound, that class's e-nodes of the operator (as first outputs); where an input is
  // bound, the parents of the bound input with fewest; else AllCandidates.
  const std::vector<ENodeId>& Candidates(size_t depth) {
    const RuleOp& op = src_.ops[order_[depth]];
    for (int k = 0; k < op.num_outputs; ++k)
      if (const ClassId c = m_.tensors[first_output_[order_[depth]] + k]; c != kNoClass) return Producers(depth, c, k);
    const std::vector<ENodeId>* fewest = nullptr;
    for (int t : op.inputs) {
      if (m_.tensors[t] == kNoClass) continue;
      const std::vector<ENodeId>& parents = eg_.Parents(m_.tensors[t]);
      if (fewest == nullptr || parents.size() < fewest->size()) fewest = &parents;
    }
    return fewest != nullptr ? *fewest : AllCandidates(eg_, op);
  }

  // The first-output e-nodes of the operators in class c whose output k is in c.
  const std::vector<ENodeId>& Producers(size_t depth, ClassId c, int k) {
    std::vector<ENodeId>& list = scratch_[depth];
    list.clear();
    const OpDef* op = src_.ops[order_[depth]].op;
    for (ENodeId n : eg_.NodesIn(c)) {
      const ENode& node = eg_.node(n);
      if (node.op != op || node.output != k) continue;
      if (k == 0) {
        list.push_back(n);
        continue;
      }
      ENode probe = node;
      probe.output = 0;
      if (const ENodeId first = eg_.Lookup(probe); first != kNoENode) list.push_back(first);
    }
    return list;
  }

  // Whether e-node n, not bound yet, is operator i's first output with a rule form and
  // the operator's number of inputs (all present and of known shape) and outputs.
  bool Fits(int i, ENodeId n) const {
    const RuleOp& op = src_.ops[i];
    const ENode& node = eg_.node(n);
    if (!eg_.alive(n) || node.op != op.op || node.output != 0 || !node.rule_params) return false;
    if (node.children.size() != op.inputs.size() || node.num_outputs != op.num_outputs) return false;
    if (std::find(m_.nodes.begin(), m_.nodes.end(), n) != m_.nodes.end()) return false;
    for (ClassId c : node.children)
      if (c == kNoClass || !eg_.eclass(c).type.shape_known) return false;
    return true;
  }

  void TryNode(size_t depth, ENodeId n, absl::Span<const ClassId> children) {
    const int i = order_[depth];
    Bound bound;  // rule tensors bound here, unbound on return
    if (BindInputs(i, children, bound) && ParamsHold(i, n, children) && BindOutputs(i, n, bound)) {
      m_.nodes[i] = n;
      Extend(depth + 1);
      m_.nodes[i] = kNoENode;
    }
    for (int t : bound) m_.tensors[t] = kNoClass;
  }

  // Binds rule tensor t to class c, or checks that it is bound to c.
  bool Bind(int t, ClassId c, Bound& bound) {
    if (m_.tensors[t] == kNoClass) {
      m_.tensors[t] = c;
      bound.push_back(t);
      return true;
    }
    return m_.tensors[t] == c;
  }

  // Binds operator i's inputs to `children`, each holding an e-node of the source
  // operator computing it, if any (checked first: it rejects most e-nodes cheaply).
  bool BindInputs(int i, absl::Span<const ClassId> children, Bound& bound) {
    const RuleOp& op = src_.ops[i];
    for (size_t j = 0; j < op.inputs.size(); ++j) {
      const uint64_t bits = producer_bits_[op.inputs[j]];
      if ((eg_.ClassOps(children[j]) & bits) != bits) return false;
    }
    for (size_t j = 0; j < op.inputs.size(); ++j)
      if (!Bind(op.inputs[j], children[j], bound)) return false;
    return true;
  }

  // The classes of e-node n's outputs (its siblings for the other output indexes).
  bool BindOutputs(int i, ENodeId n, Bound& bound) {
    if (!Bind(first_output_[i], eg_.ClassOf(n), bound)) return false;
    if (src_.ops[i].num_outputs == 1) return true;
    ENode probe = eg_.node(n);
    for (int k = 1; k < src_.ops[i].num_outputs; ++k) {
      probe.output = k;
      const ENodeId sibling = eg_.Lookup(probe);
      if (sibling == kNoENode || !Bind(first_output_[i] + k, eg_.ClassOf(sibling), bound)) return false;
    }
    return true;
  }

  // The variant's shape conditions, and the rule form where it has no symbolic sizes
  // (those are resolved once every tensor is bound: SizedParamsHold).
  bool ParamsHold(int i, ENodeId n, absl::Span<const ClassId> children) {
    shapes_.resize(children.size());  // assigned in place: the scratch keeps its storage
    for (size_t j = 0; j < children.size(); ++j) shapes_[j] = eg_.eclass(children[j]).type.shape;
    if (!variants_[i].AcceptsShapes(shapes_)) return false;
    return !src_.ops[i].sizes.empty() || *eg_.node(n).rule_params == src_.ops[i].params;
  }

  // The rule forms of the operators with symbolic sizes, resolved at the bound shapes.
  bool SizedParamsHold() const {
    for (size_t i = 0; i < src_.ops.size(); ++i) {
      const RuleOp& op = src_.ops[i];
      if (op.sizes.empty()) continue;
      auto want =
          ResolvedParams(rule_, op, [&](int t) -> const Shape& { return eg_.eclass(m_.tensors[t]).type.shape; });
      if (!want.ok() || !(*eg_.node(m_.nodes[i]).rule_params == *want)) return false;
    }
    return true;
  }

  const EGraph& eg_;
  const Rule& rule_;
  const RuleGraph& src_;
  const std::vector<GeneratorVariant>& variants_;
  const Clock::time_point deadline_;
  const int64_t max_matches_;
  const std::vector<int> order_;               // source operators in the order they are bound
  std::vector<std::vector<ENodeId>> scratch_;  // per depth: Producers' list
  std::vector<int> first_output_;              // per source operator: the rule tensor of its first output
  std::vector<uint64_t> producer_bits_;        // per rule tensor: OpBits of the operator computing it, or 0
  EMatch m_;
  std::vector<EMatch> found_;
  std::vector<Shape> shapes_;  // ParamsHold's scratch
  int64_t steps_ = 0;
  bool stopped_ = false;
};

}  // namespace

std::vector<EMatch> FindMatches(const EGraph& egraph, const RuleMatcher& rule, Clock::time_point deadline,
                                int64_t max_matches) {
  return EMatchSearch(egraph, rule, deadline, max_matches).Run();
}

}  // namespace taso::egraph
