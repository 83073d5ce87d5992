#include "taso/egraph/ematch.h"

#include <algorithm>

namespace taso::egraph {

namespace {

using Clock = std::chrono::steady_clock;

// One search for the matches of a rule's source: depth first over the source's
// operators, as the graph matcher does, with e-classes in place of values.
class EMatchSearch {
 public:
  EMatchSearch(const EGraph& egraph, const RuleMatcher& rule, Clock::time_point deadline, int64_t max_matches)
      : eg_(egraph),
        rule_(rule.rule()),
        src_(rule.rule().source),
        variants_(rule.variants()),
        deadline_(deadline),
        max_matches_(max_matches) {
    int num_tensors = static_cast<int>(rule_.inputs.size());
    for (const RuleOp& op : src_.ops) {
      first_output_.push_back(num_tensors);
      num_tensors += op.num_outputs;
    }
    m_.nodes.assign(src_.ops.size(), kNoENode);
    m_.tensors.assign(num_tensors, kNoClass);
  }

  std::vector<EMatch> Run() {
    Extend(0);
    return std::move(found_);
  }

 private:
  void Extend(size_t i) {
    if (stopped_) return;
    if (i == src_.ops.size()) {
      found_.push_back(m_);
      stopped_ = static_cast<int64_t>(found_.size()) >= max_matches_;
      return;
    }
    if (++steps_ % 1024 == 0 && Clock::now() > deadline_) {
      stopped_ = true;
      return;
    }
    for (ENodeId n : Candidates(i)) {
      if (!Fits(i, n)) continue;
      const std::vector<ClassId>& children = eg_.node(n).children;
      TryNode(i, n, children);
      if (variants_[i].commutative && children.size() == 2 && children[0] != children[1])
        TryNode(i, n, {children[1], children[0]});
    }
  }

  // The e-nodes that may stand for source operator i: the parents of a class already
  // bound (the last such), else every e-node of the operator.
  const std::vector<ENodeId>& Candidates(size_t i) const {
    ClassId anchor = kNoClass;
    for (int t : src_.ops[i].inputs)
      if (m_.tensors[t] != kNoClass) anchor = m_.tensors[t];
    return anchor != kNoClass ? eg_.Parents(anchor) : eg_.NodesOf(src_.ops[i].op);
  }

  // Whether e-node n, not bound yet, is operator i's first output with a rule form and
  // the operator's number of inputs (all present and of known shape) and outputs.
  bool Fits(size_t i, ENodeId n) const {
    const RuleOp& op = src_.ops[i];
    const ENode& node = eg_.node(n);
    if (!eg_.alive(n) || node.op != op.op || node.output != 0 || !node.rule_params) return false;
    if (node.children.size() != op.inputs.size() || node.num_outputs != op.num_outputs) return false;
    if (std::find(m_.nodes.begin(), m_.nodes.end(), n) != m_.nodes.end()) return false;
    for (ClassId c : node.children)
      if (c == kNoClass || !eg_.eclass(c).type.shape_known) return false;
    return true;
  }

  void TryNode(size_t i, ENodeId n, const std::vector<ClassId>& children) {
    std::vector<int> bound;  // rule tensors bound here, unbound on return
    if (BindInputs(i, children, bound) && ParamsHold(i, n, children) && BindOutputs(i, n, bound)) {
      m_.nodes[i] = n;
      Extend(i + 1);
      m_.nodes[i] = kNoENode;
    }
    for (int t : bound) m_.tensors[t] = kNoClass;
  }

  bool BindInputs(size_t i, const std::vector<ClassId>& children, std::vector<int>& bound) {
    const RuleOp& op = src_.ops[i];
    for (size_t j = 0; j < op.inputs.size(); ++j) {
      const int t = op.inputs[j];
      if (m_.tensors[t] == kNoClass) {
        m_.tensors[t] = children[j];
        bound.push_back(t);
      } else if (m_.tensors[t] != children[j]) {
        return false;
      }
    }
    return true;
  }

  // The classes of e-node n's outputs (its siblings for the other output indexes).
  bool BindOutputs(size_t i, ENodeId n, std::vector<int>& bound) {
    ENode probe = eg_.node(n);
    for (int k = 0; k < src_.ops[i].num_outputs; ++k) {
      probe.output = k;
      const ENodeId sibling = k == 0 ? n : eg_.Lookup(probe);
      if (sibling == kNoENode) return false;
      m_.tensors[first_output_[i] + k] = eg_.ClassOf(sibling);
      bound.push_back(first_output_[i] + k);
    }
    return true;
  }

  bool ParamsHold(size_t i, ENodeId n, const std::vector<ClassId>& children) {
    shapes_.clear();
    for (ClassId c : children) shapes_.push_back(eg_.eclass(c).type.shape);
    if (!variants_[i].AcceptsShapes(shapes_)) return false;
    const RuleOp& op = src_.ops[i];
    if (op.sizes.empty()) return *eg_.node(n).rule_params == op.params;  // nothing to resolve
    static const Shape kUnbound;                                         // a size naming it fails to resolve
    auto want = ResolvedParams(rule_, op, [&](int t) -> const Shape& {
      return m_.tensors[t] == kNoClass ? kUnbound : eg_.eclass(m_.tensors[t]).type.shape;
    });
    return want.ok() && *eg_.node(n).rule_params == *want;
  }

  const EGraph& eg_;
  const Rule& rule_;
  const RuleGraph& src_;
  const std::vector<GeneratorVariant>& variants_;
  const Clock::time_point deadline_;
  const int64_t max_matches_;
  std::vector<int> first_output_;  // per source operator: the rule tensor of its first output
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
