#include "taso/egraph/egraph.h"

#include <algorithm>

#include "absl/hash/hash.h"
#include "taso/ir/status_macros.h"

namespace taso::egraph {

namespace {

uint64_t HashOf(const ENode& n) {
  return absl::HashOf(n.op, n.params.Hash(), n.children, n.output, n.origin, n.weight);
}

bool SameENode(const ENode& a, const ENode& b) {
  return a.op == b.op && a.output == b.output && a.origin == b.origin && a.weight == b.weight &&
         a.children == b.children && a.params == b.params;
}

// What one e-node and one class hold, approximately: the structures, a parameter's map
// entry, a child in the node and in a parent list, hash-cons and index entries.
constexpr int64_t kNodeBytes = sizeof(ENode) + 64;
constexpr int64_t kParamBytes = 96;
constexpr int64_t kChildBytes = 2 * sizeof(ClassId) + sizeof(ENodeId);
constexpr int64_t kClassBytes = sizeof(EClass) + 3 * sizeof(std::vector<ENodeId>) + sizeof(ClassId);

const std::vector<ENodeId>& Empty() {
  static const std::vector<ENodeId> empty;
  return empty;
}

}  // namespace

ClassId EGraph::Find(ClassId c) const {
  while (parent_[c] != c) {
    parent_[c] = parent_[parent_[c]];
    c = parent_[c];
  }
  return c;
}

ClassId EGraph::NewClass(const OutputType& type) {
  const ClassId c = static_cast<ClassId>(classes_.size());
  classes_.emplace_back().type = type;
  bytes_ += kClassBytes + static_cast<int64_t>(sizeof(int64_t) * type.shape.size());
  parent_.push_back(c);
  class_nodes_.emplace_back();
  parents_.emplace_back();
  class_ops_.push_back(0);
  return c;
}

void EGraph::Canonicalize(ENode& node) const {
  for (ClassId& c : node.children)
    if (c != kNoClass) c = Find(c);
}

ENodeId EGraph::Lookup(const ENode& probe) const {
  auto it = memo_.find(HashOf(probe));
  if (it == memo_.end()) return kNoENode;
  for (ENodeId n : it->second)
    if (alive_[n] && SameENode(nodes_[n], probe)) return n;
  return kNoENode;
}

ENodeId EGraph::Insert(ENode node, ClassId cls) {
  const ENodeId id = static_cast<ENodeId>(nodes_.size());
  bytes_ += kNodeBytes + kParamBytes * static_cast<int64_t>(node.params.entries().size()) +
            kChildBytes * static_cast<int64_t>(node.children.size());
  memo_[HashOf(node)].push_back(id);
  class_nodes_[cls].push_back(id);
  for (ClassId c : node.children)
    if (c != kNoClass) parents_[Find(c)].push_back(id);
  nodes_.push_back(std::move(node));
  node_class_.push_back(cls);
  alive_.push_back(true);
  IndexNode(id);
  ++live_nodes_;
  return id;
}

ClassId EGraph::AddLeaf(const Graph& graph, ValueId v) {
  const Value& value = graph.value(v);
  ENode leaf;
  leaf.origin = v;
  leaf.weight = value.is_weight() && !value.is_graph_input;
  if (ENodeId n = Lookup(leaf); n != kNoENode) return ClassOf(n);
  const ClassId c = NewClass(OutputType{value.dtype, value.shape, value.shape_known});
  classes_[c].constant = value.data;
  classes_[c].weight_only = leaf.weight;
  classes_[c].origin = v;
  Insert(std::move(leaf), c);
  return c;
}

absl::StatusOr<std::vector<ClassId>> EGraph::AddOp(const OpDef* op, const Params& params, std::vector<ClassId> children,
                                                   RuleApplication made_by) {
  std::vector<InputInfo> infos;
  for (ClassId& c : children) {
    if (c == kNoClass) {
      infos.emplace_back().present = false;
      continue;
    }
    c = Find(c);
    const EClass& cls = classes_[c];
    infos.push_back(InputInfo{true, cls.type.dtype, cls.type.shape, cls.type.shape_known, cls.constant.get()});
  }
  ENode probe;
  probe.op = op;
  probe.params = params;
  probe.children = std::move(children);
  if (ENodeId n = Lookup(probe); n != kNoENode) {
    std::vector<ClassId> outs;
    for (int k = 0; k < nodes_[n].num_outputs; ++k) {
      probe.output = k;
      outs.push_back(ClassOf(Lookup(probe)));
    }
    return outs;
  }
  ASSIGN_OR_RETURN(std::vector<OutputType> types, op->InferTypes(params, infos));
  std::optional<Params> rule_params = op->RuleParams(params, infos);
  std::vector<ClassId> outs;
  for (size_t k = 0; k < types.size(); ++k) {
    ENode node = probe;
    node.output = static_cast<int>(k);
    node.num_outputs = static_cast<int>(types.size());
    node.rule_params = rule_params;
    node.made_by = made_by;
    const ClassId c = NewClass(types[k]);
    classes_[c].constant = op->ConstantOutput(params);  // readers' shape rules may need it
    outs.push_back(c);
    Insert(std::move(node), c);
  }
  return outs;
}

std::vector<ClassId> EGraph::AddOpaque(NodeId node, const OpDef* op, std::vector<ClassId> children,
                                       const std::vector<OutputType>& types) {
  ENode probe;
  probe.op = op;
  probe.children = std::move(children);
  probe.origin = node;
  Canonicalize(probe);
  std::vector<ClassId> outs;
  for (size_t k = 0; k < types.size(); ++k) {
    probe.output = static_cast<int>(k);
    if (ENodeId n = Lookup(probe); n != kNoENode) {
      outs.push_back(ClassOf(n));
      continue;
    }
    ENode copy = probe;
    copy.num_outputs = static_cast<int>(types.size());
    const ClassId c = NewClass(types[k]);
    outs.push_back(c);
    Insert(std::move(copy), c);
  }
  return outs;
}

void EGraph::NameClass(ClassId c, ValueId v) {
  EClass& cls = classes_[Find(c)];
  if (cls.origin == kNoValue || v < cls.origin) cls.origin = v;
}

bool EGraph::Merge(ClassId a, ClassId b) {
  a = Find(a);
  b = Find(b);
  if (a == b) return false;
  const OutputType& ta = classes_[a].type;
  const OutputType& tb = classes_[b].type;
  if (ta.dtype != tb.dtype || ta.shape != tb.shape || ta.shape_known != tb.shape_known) return false;
  if (b < a) std::swap(a, b);  // the older class stays the root
  parent_[b] = a;
  EClass& root = classes_[a];
  const EClass& other = classes_[b];
  if (!root.constant) root.constant = other.constant;
  root.weight_only = root.weight_only || other.weight_only;
  if (root.origin == kNoValue || (other.origin != kNoValue && other.origin < root.origin)) root.origin = other.origin;
  return true;
}

bool EGraph::CongruencePass() {
  memo_.clear();
  bool merged = false;
  for (ENodeId n = 0; n < num_node_ids(); ++n) {
    if (!alive_[n]) continue;
    Canonicalize(nodes_[n]);
    std::vector<ENodeId>& bucket = memo_[HashOf(nodes_[n])];
    auto same = std::find_if(bucket.begin(), bucket.end(), [&](ENodeId m) { return SameENode(nodes_[m], nodes_[n]); });
    if (same == bucket.end()) {
      bucket.push_back(n);
      continue;
    }
    alive_[n] = false;
    --live_nodes_;
    merged |= Merge(node_class_[n], node_class_[*same]);
  }
  return merged;
}

void EGraph::RebuildIndexes() {
  for (auto& list : class_nodes_) list.clear();
  for (auto& list : parents_) list.clear();
  by_op_.clear();
  by_form_.clear();
  std::fill(class_ops_.begin(), class_ops_.end(), 0);
  for (ENodeId n = 0; n < num_node_ids(); ++n) {
    if (!alive_[n]) continue;
    const ENode& node = nodes_[n];
    class_nodes_[ClassOf(n)].push_back(n);
    for (size_t i = 0; i < node.children.size(); ++i) {
      const ClassId c = node.children[i];
      // A node reading one class twice is listed once among its parents.
      if (c != kNoClass && std::find(node.children.begin(), node.children.begin() + i, c) == node.children.begin() + i)
        parents_[c].push_back(n);
    }
    IndexNode(n);
  }
}

uint64_t EGraph::AddOpBit(const OpDef* op) {
  const int number = op_numbers_.try_emplace(op, static_cast<int>(op_numbers_.size())).first->second;
  return uint64_t{1} << (number % 64);
}

// An operator no e-node has yet gets every bit: no class passes the filter.
uint64_t EGraph::OpBits(const OpDef* op) const {
  auto it = op_numbers_.find(op);
  return it == op_numbers_.end() ? ~uint64_t{0} : uint64_t{1} << (it->second % 64);
}

void EGraph::IndexNode(ENodeId n) {
  const ENode& node = nodes_[n];
  if (node.op == nullptr) return;
  class_ops_[ClassOf(n)] |= AddOpBit(node.op);
  by_op_[node.op].push_back(n);
  if (node.output == 0 && node.rule_params) by_form_[{node.op, node.rule_params->Hash()}].push_back(n);
}

// A class is weight-only when one of its e-nodes is computable ahead of time: a weight
// leaf, or a library operator reading only shapes or only weight-only classes.
void EGraph::MarkWeightOnly() {
  for (bool changed = true; changed;) {
    changed = false;
    for (ENodeId n = 0; n < num_node_ids(); ++n) {
      if (!alive_[n]) continue;
      const ENode& node = nodes_[n];
      EClass& cls = classes_[ClassOf(n)];
      if (cls.weight_only || node.is_leaf() || node.is_opaque()) continue;
      bool ahead = true;
      for (size_t i = 0; i < node.children.size(); ++i) {
        const ClassId c = node.children[i];
        ahead &= c == kNoClass || node.op->reads_only_shape_of(static_cast<int>(i)) || classes_[Find(c)].weight_only;
      }
      if (ahead) cls.weight_only = changed = true;
    }
  }
}

void EGraph::Rebuild() {
  while (CongruencePass()) {
  }
  RebuildIndexes();
  MarkWeightOnly();
}

int64_t EGraph::num_classes() const {
  int64_t n = 0;
  for (ClassId c = 0; c < static_cast<ClassId>(classes_.size()); ++c) n += Find(c) == c;
  return n;
}

const std::vector<ENodeId>& EGraph::NodesIn(ClassId c) const { return class_nodes_[Find(c)]; }
const std::vector<ENodeId>& EGraph::Parents(ClassId c) const { return parents_[Find(c)]; }
const std::vector<ENodeId>& EGraph::NodesOf(const OpDef* op) const {
  auto it = by_op_.find(op);
  return it == by_op_.end() ? Empty() : it->second;
}

const std::vector<ENodeId>& EGraph::NodesOfForm(const OpDef* op, const Params& form) const {
  auto it = by_form_.find(std::make_pair(op, form.Hash()));
  return it == by_form_.end() ? Empty() : it->second;
}

}  // namespace taso::egraph
