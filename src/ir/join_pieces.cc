#include "taso/ir/join_pieces.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "taso/ir/graph_copy.h"
#include "taso/ir/status_macros.h"
// The operators this clean-up knows, through their accessors in ops/.
#include "taso/ir/ops/concat.h"
#include "taso/ir/ops/split.h"

namespace taso {

namespace {

// A node's axis made non-negative at its first input's rank (or its output's for Concat).
int64_t Normalized(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

std::optional<int64_t> ConcatAxisOf(const Graph& g, NodeId n) {
  const Node& node = g.node(n);
  if (!ops::IsConcat(*node.op)) return std::nullopt;
  return Normalized(ops::ConcatAxis(node.params), g.value(node.outputs[0]).shape.size());
}

// A Split cutting one input by the sizes its parameters give.
std::optional<int64_t> SplitAxisOf(const Graph& g, NodeId n) {
  const Node& node = g.node(n);
  if (!ops::IsSplit(*node.op) || node.inputs.size() != 1 || !ops::SplitSizes(node.params)) return std::nullopt;
  return Normalized(ops::SplitAxis(node.params), g.value(node.inputs[0]).shape.size());
}

// One rewrite: the nodes it drops, the node it replaces (kNoNode: none) and what that
// node becomes, and values that other values stand for from then on.
struct Rewrite {
  std::vector<NodeId> dropped;
  NodeId replaced = kNoNode;
  Params params;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;                      // the old values the new node's outputs stand for
  std::vector<std::pair<ValueId, ValueId>> aliases;  // old value -> the old value it becomes
};

class PieceJoiner {
 public:
  explicit PieceJoiner(const Graph& g) : g_(g), uses_(g) {}

  std::optional<Rewrite> Find() const {
    for (NodeId n = 0; n < g_.num_nodes(); ++n) {
      if (auto r = NestedConcat(n)) return r;
      if (auto r = NestedSplit(n)) return r;
      if (auto r = ConcatOfSplit(n)) return r;
    }
    return std::nullopt;
  }

 private:
  // The node producing `v` when only node `reader` reads it, once, and it is no output.
  NodeId SoleProducerFor(ValueId v, NodeId reader) const {
    const NodeId p = g_.value(v).producer;
    return p != kNoNode && uses_.SoleReader(v) == reader ? p : kNoNode;
  }

  std::optional<Rewrite> NestedConcat(NodeId n) const {
    const std::optional<int64_t> axis = ConcatAxisOf(g_, n);
    if (!axis) return std::nullopt;
    const Node& node = g_.node(n);
    for (ValueId in : node.inputs) {
      const NodeId inner = SoleProducerFor(in, n);
      if (inner == kNoNode || ConcatAxisOf(g_, inner) != axis) continue;
      Rewrite r{{inner}, n, node.params, {}, node.outputs, {}};
      for (ValueId v : node.inputs)
        if (v == in) {
          const auto& parts = g_.node(inner).inputs;
          r.inputs.insert(r.inputs.end(), parts.begin(), parts.end());
        } else {
          r.inputs.push_back(v);
        }
      return r;
    }
    return std::nullopt;
  }

  std::optional<Rewrite> NestedSplit(NodeId n) const {
    const std::optional<int64_t> axis = SplitAxisOf(g_, n);
    if (!axis) return std::nullopt;
    const Node& node = g_.node(n);
    const std::vector<int64_t> sizes = *ops::SplitSizes(node.params);
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const NodeId inner = uses_.SoleReader(node.outputs[k]);
      if (inner == kNoNode || SplitAxisOf(g_, inner) != axis) continue;
      const std::vector<int64_t> inner_sizes = *ops::SplitSizes(g_.node(inner).params);
      std::vector<int64_t> all(sizes.begin(), sizes.begin() + k);
      all.insert(all.end(), inner_sizes.begin(), inner_sizes.end());
      all.insert(all.end(), sizes.begin() + k + 1, sizes.end());
      Rewrite r{{inner}, n, ops::SplitParams(ops::SplitAxis(node.params), all), node.inputs, {}, {}};
      r.outputs.assign(node.outputs.begin(), node.outputs.begin() + k);
      const auto& pieces = g_.node(inner).outputs;
      r.outputs.insert(r.outputs.end(), pieces.begin(), pieces.end());
      r.outputs.insert(r.outputs.end(), node.outputs.begin() + k + 1, node.outputs.end());
      return r;
    }
    return std::nullopt;
  }

  std::optional<Rewrite> ConcatOfSplit(NodeId n) const {
    const std::optional<int64_t> axis = ConcatAxisOf(g_, n);
    const Node& node = g_.node(n);
    if (!axis || node.inputs.empty() || uses_.is_graph_output(node.outputs[0])) return std::nullopt;
    const NodeId split = SoleProducerFor(node.inputs[0], n);
    if (split == kNoNode || SplitAxisOf(g_, split) != axis || g_.node(split).outputs != node.inputs)
      return std::nullopt;
    for (ValueId piece : node.inputs)
      if (uses_.SoleReader(piece) != n) return std::nullopt;
    return Rewrite{{split, n}, kNoNode, {}, {}, {}, {{node.outputs[0], g_.node(split).inputs[0]}}};
  }

  const Graph& g_;
  const UseIndex uses_;
};

absl::StatusOr<Graph> Apply(const Graph& g, const Rewrite& r) {
  GraphCopy copy(g);
  RETURN_IF_ERROR(copy.CopyInputs());
  ASSIGN_OR_RETURN(const std::vector<NodeId> order, g.TopologicalOrder());
  std::vector<bool> dropped(g.num_nodes(), false);
  for (NodeId d : r.dropped) dropped[d] = true;
  for (NodeId n : order) {
    if (dropped[n]) continue;
    for (const auto& [from, to] : r.aliases) {
      if (copy.Made(from) || !copy.Available({to})) continue;
      ASSIGN_OR_RETURN(ValueId now, copy.Use(to));
      copy.Replace(from, now);
    }
    if (n != r.replaced) {
      RETURN_IF_ERROR(copy.CopyNode(n));
      continue;
    }
    std::vector<ValueId> inputs;
    for (ValueId v : r.inputs) {
      ASSIGN_OR_RETURN(ValueId now, copy.Use(v));
      inputs.push_back(now);
    }
    std::vector<std::string> names;
    for (ValueId v : r.outputs) names.push_back(g.value(v).name);
    ASSIGN_OR_RETURN(std::vector<ValueId> outs, copy.AddNodeLike(n, r.params, std::move(inputs), std::move(names)));
    for (size_t k = 0; k < outs.size(); ++k) copy.Replace(r.outputs[k], outs[k]);
  }
  return copy.Finish();
}

// The sizes of a Split node that reads them from a constant input; nothing for any other node.
std::optional<std::vector<int64_t>> ConstantSplitSizes(const Graph& g, const Node& node) {
  if (!ops::IsSplit(*node.op) || node.inputs.size() != 2 || node.inputs[1] == kNoValue) return std::nullopt;
  const TensorData* sizes = g.ConstantData(node.inputs[1]);
  if (sizes == nullptr || sizes->dtype() != DataType::kInt64) return std::nullopt;
  return std::vector<int64_t>(sizes->ints().begin(), sizes->ints().end());
}

// Whether `node` is a Constant (no inputs) whose outputs only converted Splits read, as
// their sizes: nothing reads it once they take the sizes as a parameter.
bool OnlyConvertedRead(const Graph& g, const UseIndex& uses, const Node& node, const std::vector<bool>& converted) {
  if (!node.inputs.empty()) return false;
  for (ValueId v : node.outputs) {
    if (uses.is_graph_output(v) || uses.readers(v).empty()) return false;
    for (NodeId r : uses.readers(v))
      if (!converted[r] || g.node(r).inputs[0] == v) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<Graph> SplitSizesAsParameters(const Graph& graph) {
  std::vector<bool> converted(graph.num_nodes(), false);
  for (NodeId n = 0; n < graph.num_nodes(); ++n) converted[n] = ConstantSplitSizes(graph, graph.node(n)).has_value();
  if (std::find(converted.begin(), converted.end(), true) == converted.end()) return graph;
  const UseIndex uses(graph);
  GraphCopy copy(graph);
  RETURN_IF_ERROR(copy.CopyInputs());
  ASSIGN_OR_RETURN(const std::vector<NodeId> order, graph.TopologicalOrder());
  for (NodeId n : order) {
    const Node& node = graph.node(n);
    if (!converted[n]) {
      if (!OnlyConvertedRead(graph, uses, node, converted)) RETURN_IF_ERROR(copy.CopyNode(n));
      continue;
    }
    ASSIGN_OR_RETURN(ValueId data, copy.Use(node.inputs[0]));
    std::vector<std::string> names;
    for (ValueId v : node.outputs) names.push_back(graph.value(v).name);
    const Params params = ops::SplitParams(ops::SplitAxis(node.params), *ConstantSplitSizes(graph, node));
    ASSIGN_OR_RETURN(std::vector<ValueId> outs, copy.AddNodeLike(n, params, {data}, std::move(names)));
    for (size_t k = 0; k < outs.size(); ++k) copy.Replace(node.outputs[k], outs[k]);
  }
  return copy.Finish();
}

absl::StatusOr<Graph> JoinNestedPieces(const Graph& graph) {
  Graph g = graph;
  for (;;) {
    const std::optional<Rewrite> rewrite = PieceJoiner(g).Find();
    if (!rewrite) return g;
    ASSIGN_OR_RETURN(g, Apply(g, *rewrite));
  }
}

}  // namespace taso
