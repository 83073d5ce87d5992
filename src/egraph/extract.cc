// Pricing e-nodes and the greedy extraction.
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>
#include <queue>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "taso/egraph/extract.h"
#include "taso/ir/status_macros.h"

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

// Float zeros of each shape asked for, made once: pricing reads thousands of weight-only
// classes, and a fresh tensor of megabytes for each was most of the pricing's time.
class ZeroTensors {
 public:
  TensorDataPtr Of(const Shape& shape) {
    TensorDataPtr& zeros = by_shape_[shape];
    if (!zeros) zeros = TensorData::Float(shape, std::vector<float>(NumElements(shape), 0.0f));
    return zeros;
  }

 private:
  absl::flat_hash_map<Shape, TensorDataPtr> by_shape_;
};

// A class as an operand of a node priced alone: a weight-only class is an initializer, as
// it will be once folded (its data where known, else zeros of its type: a runtime prices
// an initializer apart from a fed tensor, not by its values).
absl::StatusOr<ValueId> AddOperand(Graph& g, const std::string& name, const EClass& cls, ZeroTensors& zeros) {
  if (!cls.weight_only) return g.AddInput(name, cls.type.dtype, cls.type.shape);
  if (cls.constant) return g.AddWeight(name, cls.constant);
  if (cls.type.dtype != DataType::kFloat32) return g.AddInput(name, cls.type.dtype, cls.type.shape);
  return g.AddWeight(name, zeros.Of(cls.type.shape));
}

// A copy of node `n` of `from` in `g` with its inputs fed (weights as initializers),
// except those reading `replaced`, which read `at` (replaced == kNoValue: none); output
// `k` of the copy.
absl::StatusOr<ValueId> AddCopy(Graph& g, const Graph& from, NodeId n, ValueId replaced, ValueId at, int k) {
  const Node& node = from.node(n);
  std::vector<ValueId> inputs;
  for (const ValueId v : node.inputs) {
    if (v == kNoValue) {
      inputs.push_back(kNoValue);
    } else if (v == replaced) {
      inputs.push_back(at);
    } else {
      const Value& value = from.value(v);
      if (!value.shape_known) return absl::FailedPreconditionError("an input of unknown shape");
      const std::string name = absl::StrCat("fed", g.num_values());
      ASSIGN_OR_RETURN(const ValueId fed, value.is_constant() ? g.AddWeight(name, value.data)
                                                              : g.AddInput(name, value.dtype, value.shape));
      inputs.push_back(fed);
    }
  }
  ASSIGN_OR_RETURN(const std::vector<ValueId> outs, g.AddNode(node.op, node.params, std::move(inputs)));
  return outs[k];
}

// Where class `c` holds a value the context's graph computes with a library operator:
// that operator's copy computing it in `g`.
std::optional<ValueId> AddProducer(Graph& g, const EGraph& eg, ClassId c, const PricingContext* context) {
  const EClass& cls = eg.eclass(c);
  if (context == nullptr || cls.weight_only || cls.origin == kNoValue) return std::nullopt;
  const Value& v = context->graph->value(cls.origin);
  if (v.producer == kNoNode || context->graph->node(v.producer).op->is_opaque()) return std::nullopt;
  absl::StatusOr<ValueId> made = AddCopy(g, *context->graph, v.producer, kNoValue, kNoValue, v.producer_output);
  return made.ok() ? std::optional<ValueId>(*made) : std::nullopt;
}

// The e-node's operator in `g` reading its classes (made by their producers with a
// context); its outputs, or nullopt where a child's shape is unknown (an opaque node's
// output: such a node is never rewritten) or the operator refuses its inputs.
std::optional<std::vector<ValueId>> PlaceOperator(Graph& g, const EGraph& eg, const ENode& node,
                                                  const PricingContext* context, ZeroTensors& zeros) {
  std::vector<ValueId> inputs;
  for (const ClassId c : node.children) {
    if (c == kNoClass) {
      inputs.push_back(kNoValue);
      continue;
    }
    const EClass& cls = eg.eclass(c);
    if (!cls.type.shape_known) return std::nullopt;
    if (std::optional<ValueId> made = AddProducer(g, eg, c, context)) {
      inputs.push_back(*made);
      continue;
    }
    auto v = AddOperand(g, absl::StrCat("in", g.num_values()), cls, zeros);
    if (!v.ok()) return std::nullopt;
    inputs.push_back(*v);
  }
  auto outs = g.AddNode(node.op, node.params, std::move(inputs));
  if (!outs.ok()) return std::nullopt;
  return *std::move(outs);
}

// What the readers of `origin` in the context's graph pay more for reading `value` (an
// output of the operator placed in `g`) than for reading a fed tensor.
double ReadersSurcharge(Graph& g, ValueId value, ValueId origin, CostModel& cost, const PricingContext& context) {
  if (origin == kNoValue) return 0;
  double surcharge = 0;
  for (NodeId reader : context.uses->readers(origin)) {
    if (context.graph->node(reader).op->is_opaque()) continue;
    absl::StatusOr<ValueId> here = AddCopy(g, *context.graph, reader, origin, value, 0);
    absl::StatusOr<ValueId> apart = AddCopy(g, *context.graph, reader, kNoValue, kNoValue, 0);
    if (here.ok() && apart.ok())
      surcharge += cost.NodeCost(g, g.value(*here).producer) - cost.NodeCost(g, g.value(*apart).producer);
  }
  return surcharge;
}

// Whether the e-node is priced, where it is the first output of its operator (other
// outputs share its price): a library operator not computed ahead of time, marked in
// `only` where that is given.
bool PricedAsFirstOutput(const EGraph& egraph, ENodeId n, const std::vector<bool>* only) {
  const ENode& node = egraph.node(n);
  if (!egraph.alive(n) || node.is_leaf() || node.is_opaque() || AheadOfTime(egraph, node)) return false;
  const ENodeId first = FirstOutput(egraph, n);
  if (first != n && first != kNoENode) return false;
  return only == nullptr || (*only)[n];
}

// The operators of the e-nodes `only` marks, placed as PriceENodes places them and
// measured together (CostModel::MeasureTogether) before `stop`. Per e-node id: whether
// its operator's cost is known now.
std::vector<bool> MeasureMarkedTogether(const EGraph& egraph, CostModel& cost, const std::vector<bool>& only,
                                        const PricingContext* context, ZeroTensors& zeros,
                                        std::chrono::steady_clock::time_point stop) {
  std::deque<Graph> graphs;  // each node refers to its graph
  std::vector<CostModel::NodeOf> nodes;
  std::vector<ENodeId> ids;
  for (ENodeId n = 0; n < egraph.num_node_ids(); ++n) {
    if (!PricedAsFirstOutput(egraph, n, &only)) continue;
    Graph& g = graphs.emplace_back();
    const std::optional<std::vector<ValueId>> outs = PlaceOperator(g, egraph, egraph.node(n), context, zeros);
    if (!outs) continue;
    nodes.push_back({&g, g.value(outs->front()).producer});
    ids.push_back(n);
  }
  const std::vector<bool> measured = cost.MeasureTogether(nodes, stop);
  std::vector<bool> known(egraph.num_node_ids(), false);
  for (size_t i = 0; i < ids.size(); ++i) known[ids[i]] = measured[i];
  return known;
}

}  // namespace

std::vector<double> PriceENodes(const EGraph& egraph, CostModel& cost, const std::vector<bool>* only,
                                const PricingContext* context, std::chrono::steady_clock::time_point stop) {
  std::vector<double> prices(egraph.num_node_ids(), 0.0), shares(egraph.num_node_ids(), 0.0);
  const bool stops = stop != std::chrono::steady_clock::time_point::max();
  ZeroTensors zeros;
  // Costs a choice weighs against each other are measured at one moment where they can.
  const std::vector<bool> known = only != nullptr ? MeasureMarkedTogether(egraph, cost, *only, context, zeros, stop)
                                                  : std::vector<bool>(egraph.num_node_ids(), false);
  for (ENodeId n = 0; n < egraph.num_node_ids(); ++n) {
    const ENode& node = egraph.node(n);
    if (!egraph.alive(n) || node.is_leaf() || node.is_opaque() || AheadOfTime(egraph, node)) continue;
    const ENodeId first = FirstOutput(egraph, n);
    if (only != nullptr && !(*only)[first == kNoENode ? n : first]) continue;
    // The operator is placed once per e-node: priced at its first output (before any
    // reader is added to `g`), and each output's readers priced around it.
    const bool first_output = first == n || first == kNoENode;
    if (stops && (first_output ? !known[n] && std::chrono::steady_clock::now() >= stop : std::isnan(shares[first]))) {
      prices[n] = shares[n] = std::numeric_limits<double>::quiet_NaN();
      continue;
    }
    Graph g;
    std::optional<std::vector<ValueId>> outs;
    if (first_output || context != nullptr) outs = PlaceOperator(g, egraph, node, context, zeros);
    if (!first_output)
      shares[n] = shares[first];
    else if (outs)
      shares[n] = cost.NodeCost(g, g.value(outs->front()).producer) / node.num_outputs;
    prices[n] = shares[n];
    if (context != nullptr && outs)
      prices[n] += ReadersSurcharge(g, (*outs)[node.output], egraph.eclass(egraph.ClassOf(n)).origin, cost, *context);
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

bool TreeCostCounts(const ENode& node, size_t i) {
  const std::vector<ClassId>& ch = node.children;
  return ch[i] != kNoClass && std::find(ch.begin(), ch.begin() + i, ch[i]) == ch.begin() + i &&
         !(node.op != nullptr && node.op->reads_only_shape_of(static_cast<int>(i)));
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
      if (TreeCostCounts(eg.node(n), i)) total += best[ch[i]];
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
