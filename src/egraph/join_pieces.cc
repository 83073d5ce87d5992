#include "taso/egraph/join_pieces.h"

#include <optional>
#include <vector>

#include "concat.h"  // ops/
#include "split.h"   // ops/

namespace taso::egraph {

namespace {

int64_t Normalized(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

// The axis and sizes of a Split e-node cutting one input by the sizes its parameters give.
struct Cut {
  int64_t axis;
  std::vector<int64_t> sizes;
};
std::optional<Cut> CutOf(const EGraph& eg, const ENode& node) {
  if (node.is_leaf() || !ops::IsSplit(*node.op) || node.output != 0 || node.children.size() != 1) return std::nullopt;
  std::optional<std::vector<int64_t>> sizes = ops::SplitSizes(node.params);
  if (!sizes) return std::nullopt;
  return Cut{Normalized(ops::SplitAxis(node.params), eg.eclass(node.children[0]).type.shape.size()), *sizes};
}

std::optional<int64_t> ConcatAxisOf(const EGraph& eg, ENodeId n) {
  const ENode& node = eg.node(n);
  if (node.is_leaf() || !ops::IsConcat(*node.op)) return std::nullopt;
  return Normalized(ops::ConcatAxis(node.params), eg.eclass(eg.ClassOf(n)).type.shape.size());
}

class Joiner {
 public:
  Joiner(EGraph& eg, int64_t max_enodes) : eg_(eg), max_enodes_(max_enodes) {}

  // One pass over the e-nodes there were when it began; the e-nodes added.
  int64_t Pass() {
    const int64_t before = eg_.num_enodes();
    const ENodeId end = eg_.num_node_ids();
    for (ENodeId n = 0; n < end && eg_.num_enodes() < max_enodes_; ++n) {
      if (!eg_.alive(n)) continue;
      JoinSplits(n);
      JoinConcats(n);
    }
    eg_.Rebuild();
    return eg_.num_enodes() - before;
  }

 private:
  // Split S, and a Split T of one of S's pieces along the same axis: one Split of S's
  // input into S's pieces with T's in place of the piece T cuts.
  void JoinSplits(ENodeId s) {
    const ENode outer = eg_.node(s);
    const std::optional<Cut> cut = CutOf(eg_, outer);
    if (!cut) return;
    const std::vector<ClassId> pieces = Outputs(outer);
    for (size_t k = 0; k < pieces.size(); ++k)
      for (ENodeId t : eg_.Parents(pieces[k])) {
        const ENode& inner = eg_.node(t);
        const std::optional<Cut> inner_cut = eg_.alive(t) ? CutOf(eg_, inner) : std::nullopt;
        if (!inner_cut || inner_cut->axis != cut->axis || eg_.Find(inner.children[0]) != pieces[k]) continue;
        std::vector<int64_t> sizes(cut->sizes.begin(), cut->sizes.begin() + k);
        sizes.insert(sizes.end(), inner_cut->sizes.begin(), inner_cut->sizes.end());
        sizes.insert(sizes.end(), cut->sizes.begin() + k + 1, cut->sizes.end());
        std::vector<ClassId> joined(pieces.begin(), pieces.begin() + k);
        const std::vector<ClassId> inner_pieces = Outputs(inner);
        joined.insert(joined.end(), inner_pieces.begin(), inner_pieces.end());
        joined.insert(joined.end(), pieces.begin() + k + 1, pieces.end());
        Add(outer.op, ops::SplitParams(cut->axis, sizes), outer.children, joined);
      }
  }

  // Concat C, and a Concat D in the class of one of C's inputs, along the same axis:
  // C's inputs with D's in place of that input.
  void JoinConcats(ENodeId c) {
    const std::optional<int64_t> axis = ConcatAxisOf(eg_, c);
    if (!axis) return;
    const ENode outer = eg_.node(c);
    for (size_t i = 0; i < outer.children.size(); ++i)
      for (ENodeId d : eg_.NodesIn(outer.children[i])) {
        if (!eg_.alive(d) || ConcatAxisOf(eg_, d) != axis) continue;
        std::vector<ClassId> children(outer.children.begin(), outer.children.begin() + i);
        const std::vector<ClassId>& inner = eg_.node(d).children;
        children.insert(children.end(), inner.begin(), inner.end());
        children.insert(children.end(), outer.children.begin() + i + 1, outer.children.end());
        Add(outer.op, outer.params, children, {eg_.ClassOf(c)});
      }
  }

  // The classes of a multi-output e-node's outputs, in order.
  std::vector<ClassId> Outputs(const ENode& node) const {
    std::vector<ClassId> classes;
    ENode probe = node;
    for (int k = 0; k < node.num_outputs; ++k) {
      probe.output = k;
      const ENodeId e = eg_.Lookup(probe);
      classes.push_back(e == kNoENode ? kNoClass : eg_.ClassOf(e));
    }
    return classes;
  }

  void Add(const OpDef* op, const Params& params, std::vector<ClassId> children, const std::vector<ClassId>& equal_to) {
    for (ClassId c : equal_to)
      if (c == kNoClass) return;
    absl::StatusOr<std::vector<ClassId>> outs = eg_.AddOp(op, params, std::move(children));
    if (!outs.ok() || outs->size() != equal_to.size()) return;
    for (size_t k = 0; k < equal_to.size(); ++k) eg_.Merge((*outs)[k], equal_to[k]);
  }

  EGraph& eg_;
  const int64_t max_enodes_;
};

}  // namespace

int64_t AddJoinedPieces(EGraph& egraph, int64_t max_enodes) {
  Joiner joiner(egraph, max_enodes);
  int64_t added = 0;
  for (int64_t now = joiner.Pass(); now > 0; now = joiner.Pass()) added += now;
  return added;
}

}  // namespace taso::egraph
