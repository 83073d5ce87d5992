// An e-graph of a tensor graph (equality saturation, as in Tensat): e-classes of tensors
// known to be equal, each holding the e-nodes that compute it. An e-node is a library
// operator with its parameters reading child e-classes (one e-node per output of a
// multi-output operator, told apart by its output index); graph inputs and weights are
// leaves; an opaque node is an e-node no rule rewrites. E-nodes are hash-consed, and
// after merges Rebuild restores congruence (equal e-nodes in one class, canonical
// children). Every order is insertion order, so a run is deterministic.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "taso/ir/graph.h"

namespace taso::egraph {

using ClassId = int32_t;
using ENodeId = int32_t;
inline constexpr ClassId kNoClass = -1;
inline constexpr ENodeId kNoENode = -1;

// Which rule application added an e-node: the rule's index and a number distinct for
// each application (both -1: the input graph or a step that is not a rule's).
struct RuleApplication {
  int rule = -1;
  int32_t application = -1;
};

struct ENode {
  const OpDef* op = nullptr;  // null for a leaf (a graph input or a weight)
  Params params;
  std::vector<ClassId> children;  // canonical after Rebuild; kNoClass: an absent optional input
  int output = 0;                 // which output of the operator this e-node stands for
  int num_outputs = 1;
  // A leaf: the graph value it is; an opaque node: the graph node it is; else -1.
  int32_t origin = -1;
  bool weight = false;  // a leaf that is a weight not fed at run time

  // Derived when added: the parameters as rules state them (unset: no rule rewrites
  // it), and the rule application that added it.
  std::optional<Params> rule_params;
  RuleApplication made_by;

  bool is_leaf() const { return op == nullptr; }
  bool is_opaque() const { return op != nullptr && op->is_opaque(); }
};

struct EClass {
  OutputType type;
  TensorDataPtr constant;  // the data of a weight leaf or a Constant-like e-node in the class, if any
  bool weight_only = false;
  ValueId origin = kNoValue;  // the first graph value found in the class (for its name)
};

class EGraph {
 public:
  // A leaf for value `v` of `graph` (an input or a weight).
  ClassId AddLeaf(const Graph& graph, ValueId v);
  // A library operator reading `children`: one e-node per output, hash-consed; returns
  // the outputs' classes. Fails when the operator's shape rule refuses these inputs.
  absl::StatusOr<std::vector<ClassId>> AddOp(const OpDef* op, const Params& params, std::vector<ClassId> children,
                                             RuleApplication made_by = {});
  // Opaque node `node` of a graph reading `children`, with its outputs' types.
  std::vector<ClassId> AddOpaque(NodeId node, const OpDef* op, std::vector<ClassId> children,
                                 const std::vector<OutputType>& types);

  // Records graph value `v` as found in class `c` (the lowest-numbered one names it).
  void NameClass(ClassId c, ValueId v);

  // The canonical class of `c`.
  ClassId Find(ClassId c) const;
  // Makes two classes one; false when they were one already or their types differ
  // (then nothing changes). Congruence is restored by Rebuild.
  bool Merge(ClassId a, ClassId b);
  // Canonicalizes children, merges e-nodes that became equal (and their classes) until
  // nothing changes, and recomputes the indexes below and the weight-only marks.
  void Rebuild();

  const ENode& node(ENodeId n) const { return nodes_[n]; }
  const EClass& eclass(ClassId c) const { return classes_[Find(c)]; }
  // The canonical class of e-node `n`.
  ClassId ClassOf(ENodeId n) const { return Find(node_class_[n]); }
  bool alive(ENodeId n) const { return alive_[n]; }
  int num_node_ids() const { return static_cast<int>(nodes_.size()); }
  int num_class_ids() const { return static_cast<int>(classes_.size()); }
  int64_t num_enodes() const { return live_nodes_; }
  int64_t num_classes() const;
  // Approximate bytes held (e-nodes, classes, indexes), for the memory limit.
  int64_t ApproxBytes() const { return bytes_; }

  // Indexes as of the last Rebuild (or of the last addition before any), in id order.
  const std::vector<ENodeId>& NodesIn(ClassId c) const;
  const std::vector<ENodeId>& Parents(ClassId c) const;
  const std::vector<ENodeId>& NodesOf(const OpDef* op) const;
  // The e-nodes of `op` standing for its first output whose rule form (ENode::rule_params)
  // is `form`: where a rule pattern's operator has fixed parameters, the only e-nodes it
  // can match.
  const std::vector<ENodeId>& NodesOfForm(const OpDef* op, const Params& form) const;
  // A filter on the operators of a class's e-nodes: class `c` has no e-node of `op` when
  // ClassOps(c) lacks a bit of OpBits(op) (sharing bits, two operators may look alike).
  uint64_t ClassOps(ClassId c) const { return class_ops_[Find(c)]; }
  uint64_t OpBits(const OpDef* op) const;
  // The e-node equal to `probe` (children canonical), or kNoENode.
  ENodeId Lookup(const ENode& probe) const;

 private:
  ClassId NewClass(const OutputType& type);
  ENodeId Insert(ENode node, ClassId cls);
  void Canonicalize(ENode& node) const;
  // One pass of Rebuild: true when it merged classes.
  bool CongruencePass();
  void RebuildIndexes();
  void IndexNode(ENodeId n);
  uint64_t AddOpBit(const OpDef* op);
  void MarkWeightOnly();

  std::vector<ENode> nodes_;
  std::vector<ClassId> node_class_;  // per e-node: its class when added
  std::vector<bool> alive_;          // false: a duplicate found by Rebuild
  std::vector<EClass> classes_;
  mutable std::vector<ClassId> parent_;                       // union-find (path halving in Find)
  absl::flat_hash_map<uint64_t, std::vector<ENodeId>> memo_;  // hash-cons buckets
  std::vector<std::vector<ENodeId>> class_nodes_, parents_;   // per class id
  std::vector<uint64_t> class_ops_;                    // per class id: the bits (OpBit) of the operators of its e-nodes
  absl::flat_hash_map<const OpDef*, int> op_numbers_;  // in order of first sight
  absl::flat_hash_map<const OpDef*, std::vector<ENodeId>> by_op_;
  absl::flat_hash_map<std::pair<const OpDef*, uint64_t>, std::vector<ENodeId>> by_form_;  // rule_params hashed
  int64_t live_nodes_ = 0;
  int64_t bytes_ = 0;
};

// The e-graph of a graph: a leaf per input and weight, an e-node per output of each node
// (equal nodes become one), and the class of each of the graph's values (kNoClass for a
// value nothing defines). Fails when a node's shape rule fails again.
struct GraphEGraph {
  EGraph egraph;
  std::vector<ClassId> value_class;  // per graph value
};
absl::StatusOr<GraphEGraph> BuildEGraph(const Graph& graph);

}  // namespace taso::egraph
