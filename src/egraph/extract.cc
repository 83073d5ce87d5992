// Pricing e-nodes and the greedy extraction.
#include <limits>
#include <queue>

#include "absl/strings/str_cat.h"
#include "taso/egraph/extract.h"

namespace taso::egraph {

namespace {

// Whether the e-node is computed ahead of time where chosen: a library operator reading
// only shapes or only weight-only classes.
bool AheadOfTime(const EGraph& eg, const ENode& node) {
  if (node.is_leaf() || node.is_opaque()) return false;
  for (size_t i = 0; i < node.children.size(); ++i) {
    const ClassId c = node.children[i];
    if (c != kNoClass && !node.op->reads_only_shape_of(static_cast<int>(i)) && !eg.eclass(c).weight_only) return false;
  }
  return true;
}

// A class as an operand of a node priced alone: a weight-only class is an initializer, as
// it will be once folded (its data where known, else zeros of its type: a runtime prices
// an initializer apart from a fed tensor, not by its values).
absl::StatusOr<ValueId> AddOperand(Graph& g, const std::string& name, const EClass& cls) {
  if (!cls.weight_only) return g.AddInput(name, cls.type.dtype, cls.type.shape);
  if (cls.constant) return g.AddWeight(name, cls.constant);
  if (cls.type.dtype != DataType::kFloat32) return g.AddInput(name, cls.type.dtype, cls.type.shape);
  return g.AddWeight(name, TensorData::Float(cls.type.shape, std::vector<float>(NumElements(cls.type.shape), 0.0f)));
}

// The e-node's operator as the one node of a graph reading its classes; 0 where a child's
// shape is unknown (an opaque node's output: such a node is never rewritten).
double PriceOne(const EGraph& eg, const ENode& node, CostModel& cost) {
  Graph g;
  std::vector<ValueId> inputs;
  for (size_t i = 0; i < node.children.size(); ++i) {
    const ClassId c = node.children[i];
    if (c == kNoClass) {
      inputs.push_back(kNoValue);
      continue;
    }
    const EClass& cls = eg.eclass(c);
    if (!cls.type.shape_known) return 0;
    auto v = AddOperand(g, absl::StrCat("in", i), cls);
    if (!v.ok()) return 0;
    inputs.push_back(*v);
  }
  if (!g.AddNode(node.op, node.params, std::move(inputs)).ok()) return 0;
  return cost.NodeCost(g, 0);
}

}  // namespace

std::vector<double> PriceENodes(const EGraph& egraph, CostModel& cost, const std::vector<bool>* only) {
  std::vector<double> prices(egraph.num_node_ids(), 0.0);
  for (ENodeId n = 0; n < egraph.num_node_ids(); ++n) {
    const ENode& node = egraph.node(n);
    if (!egraph.alive(n) || node.is_leaf() || node.is_opaque() || AheadOfTime(egraph, node)) continue;
    const ENodeId first = FirstOutput(egraph, n);
    if (only != nullptr && !(*only)[first == kNoENode ? n : first]) continue;
    prices[n] = first != n && first != kNoENode ? prices[first] : PriceOne(egraph, node, cost) / node.num_outputs;
  }
  return prices;
}

ENodeId FirstOutput(const EGraph& egraph, ENodeId n) {
  const ENode& node = egraph.node(n);
  if (node.output == 0) return n;
  ENode probe = node;
  probe.output = 0;
  return egraph.Lookup(probe);
}

absl::StatusOr<Extraction> ExtractGreedy(const EGraph& eg, const std::vector<double>& prices,
                                         const std::vector<ClassId>& roots) {
  const int num_classes = eg.num_class_ids();
  Extraction ex{std::vector<ENodeId>(num_classes, kNoENode), {}};
  std::vector<double> best(num_classes, std::numeric_limits<double>::infinity());
  std::vector<bool> must_compute(num_classes, false);
  for (ClassId c : roots) must_compute[eg.Find(c)] = true;
  // Per e-node: its distinct children not chosen yet.
  std::vector<int> waiting(eg.num_node_ids(), 0);
  using Entry = std::pair<double, ENodeId>;  // tree cost, e-node: ties go to the older e-node
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  auto tree_cost = [&](ENodeId n) {
    double total = prices[n];
    const std::vector<ClassId>& ch = eg.node(n).children;
    for (size_t i = 0; i < ch.size(); ++i)
      if (ch[i] != kNoClass && std::find(ch.begin(), ch.begin() + i, ch[i]) == ch.begin() + i) total += best[ch[i]];
    return total;
  };
  for (ENodeId n = 0; n < eg.num_node_ids(); ++n) {
    if (!eg.alive(n)) continue;
    const std::vector<ClassId>& ch = eg.node(n).children;
    for (size_t i = 0; i < ch.size(); ++i)
      waiting[n] += ch[i] != kNoClass && std::find(ch.begin(), ch.begin() + i, ch[i]) == ch.begin() + i;
    if (waiting[n] == 0) queue.push({tree_cost(n), n});
  }
  while (!queue.empty()) {
    const auto [cost, n] = queue.top();
    queue.pop();
    const ClassId c = eg.ClassOf(n);
    if (ex.choice[c] != kNoENode || (must_compute[c] && eg.node(n).is_leaf())) continue;
    ex.choice[c] = n;
    best[c] = cost;
    ex.order.push_back(c);
    for (ENodeId p : eg.Parents(c))
      if (--waiting[p] == 0) queue.push({tree_cost(p), p});
  }
  for (ClassId c : roots)
    if (ex.choice[eg.Find(c)] == kNoENode)
      return absl::FailedPreconditionError("extraction: an output cannot be computed without a cycle");
  return ex;
}

}  // namespace taso::egraph
