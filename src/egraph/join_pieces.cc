#include "taso/egraph/join_pieces.h"

#include <optional>
#include <vector>

#include "taso/egraph/derivation.h"
#include "taso/ir/ops/concat.h"
#include "taso/ir/ops/split.h"

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

// The classes of a multi-output e-node's outputs, in order (kNoClass where absent).
std::vector<ClassId> Outputs(const EGraph& eg, const ENode& node) {
  std::vector<ClassId> classes;
  ENode probe = node;
  for (int k = 0; k < node.num_outputs; ++k) {
    probe.output = k;
    const ENodeId e = eg.Lookup(probe);
    classes.push_back(e == kNoENode ? kNoClass : eg.ClassOf(e));
  }
  return classes;
}

// Adds `op` on `children`, its outputs merged into the classes `equal_to`.
void AddEqual(EGraph& eg, const OpDef* op, const Params& params, std::vector<ClassId> children,
              const std::vector<ClassId>& equal_to) {
  for (ClassId c : equal_to)
    if (c == kNoClass) return;
  absl::StatusOr<std::vector<ClassId>> outs = eg.AddOp(op, params, std::move(children));
  if (!outs.ok() || outs->size() != equal_to.size()) return;
  for (size_t k = 0; k < equal_to.size(); ++k) eg.Merge((*outs)[k], equal_to[k]);
}

std::optional<int64_t> ConcatAxisOf(const EGraph& eg, ENodeId n) {
  const ENode& node = eg.node(n);
  if (node.is_leaf() || !ops::IsConcat(*node.op)) return std::nullopt;
  return Normalized(ops::ConcatAxis(node.params), eg.eclass(eg.ClassOf(n)).type.shape.size());
}

class Joiner {
 public:
  explicit Joiner(EGraph& eg) : eg_(eg) {}

  // Splits joined pass after pass until none is new or the e-graph has
  // `max_split_enodes`, then concatenations up to `max_concat_enodes`. The e-nodes added.
  int64_t Run(int64_t max_split_enodes, int64_t max_concat_enodes) {
    return ToFixedPoint(&Joiner::JoinSplits, max_split_enodes) + ToFixedPoint(&Joiner::JoinConcats, max_concat_enodes);
  }

 private:
  int64_t ToFixedPoint(void (Joiner::*join)(ENodeId), int64_t max_enodes) {
    int64_t added = 0;
    for (int64_t now = Pass(join, max_enodes); now > 0; now = Pass(join, max_enodes)) added += now;
    return added;
  }

  // One pass over the e-nodes there were when it began; the e-nodes added.
  int64_t Pass(void (Joiner::*join)(ENodeId), int64_t max_enodes) {
    const int64_t before = eg_.num_enodes();
    const ENodeId end = eg_.num_node_ids();
    for (ENodeId n = 0; n < end && eg_.num_enodes() < max_enodes; ++n)
      if (eg_.alive(n)) (this->*join)(n);
    eg_.Rebuild();
    return eg_.num_enodes() - before;
  }

  // Split S, and a Split T of one of S's pieces along the same axis: one Split of S's
  // input into S's pieces with T's in place of the piece T cuts.
  void JoinSplits(ENodeId s) {
    const ENode outer = eg_.node(s);
    const std::optional<Cut> cut = CutOf(eg_, outer);
    if (!cut) return;
    const std::vector<ClassId> pieces = Outputs(eg_, outer);
    for (size_t k = 0; k < pieces.size(); ++k)
      for (ENodeId t : eg_.Parents(pieces[k])) {
        const ENode& inner = eg_.node(t);
        const std::optional<Cut> inner_cut = eg_.alive(t) ? CutOf(eg_, inner) : std::nullopt;
        if (!inner_cut || inner_cut->axis != cut->axis || eg_.Find(inner.children[0]) != pieces[k]) continue;
        std::vector<int64_t> sizes(cut->sizes.begin(), cut->sizes.begin() + k);
        sizes.insert(sizes.end(), inner_cut->sizes.begin(), inner_cut->sizes.end());
        sizes.insert(sizes.end(), cut->sizes.begin() + k + 1, cut->sizes.end());
        std::vector<ClassId> joined(pieces.begin(), pieces.begin() + k);
        const std::vector<ClassId> inner_pieces = Outputs(eg_, inner);
        joined.insert(joined.end(), inner_pieces.begin(), inner_pieces.end());
        joined.insert(joined.end(), pieces.begin() + k + 1, pieces.end());
        AddEqual(eg_, outer.op, ops::SplitParams(cut->axis, sizes), outer.children, joined);
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
        AddEqual(eg_, outer.op, outer.params, children, {eg_.ClassOf(c)});
      }
  }

  EGraph& eg_;
};

// Readers of a two-piece Split's pieces joined: see AddJoinedReaders.
class ReaderJoiner {
 public:
  ReaderJoiner(EGraph& eg, int64_t max_enodes, Derivation* derivation)
      : eg_(eg), max_enodes_(max_enodes), derivation_(derivation) {}

  int64_t Pass() {
    const int64_t before = eg_.num_enodes();
    const ENodeId end = eg_.num_node_ids();
    for (ENodeId s = 0; s < end && eg_.num_enodes() < max_enodes_; ++s)
      if (eg_.alive(s)) JoinReadersOf(s);
    eg_.Rebuild();
    return eg_.num_enodes() - before;
  }

 private:
  // Pairs of readers joined per Split at most: a piece read by many e-nodes (as the
  // pieces of a merge are, once rules rewrote their readers) would otherwise add every
  // pairing of them.
  static constexpr int kMaxPairsPerSplit = 8;

  void JoinReadersOf(ENodeId s) {
    const ENode split = eg_.node(s);  // a copy: adding e-nodes may move the storage
    const std::optional<Cut> cut = CutOf(eg_, split);
    if (!cut || cut->sizes.size() != 2) return;
    const std::vector<ClassId> pieces = Outputs(eg_, split);
    if (pieces[0] == kNoClass || pieces[1] == kNoClass || WeightOnly(pieces[0])) return;  // weights fold anyway
    AddEqual(eg_, &ops::ConcatOperator(), ops::ConcatParams(cut->axis), pieces, {eg_.Find(split.children[0])});
    const std::vector<ENodeId> first = eg_.Parents(pieces[0]), second = eg_.Parents(pieces[1]);
    int pairs = 0;
    for (ENodeId a : first)
      for (ENodeId b : second)
        if (pairs < kMaxPairsPerSplit && Joinable(a, b, pieces, cut->axis)) {
          Join(split.op, a, b, cut->axis);
          ++pairs;
        }
  }

  // Whether e-nodes a and b are one operator (not a Concat or Split) with one set of
  // parameters, each with one output, reading pieces[0] and pieces[1] at one input
  // position and weights elsewhere (so that the joined work reads X and weights that fold),
  // their outputs of one shape but along `axis`.
  bool Joinable(ENodeId a, ENodeId b, const std::vector<ClassId>& pieces, int64_t axis) const {
    if (a == b || !eg_.alive(a) || !eg_.alive(b)) return false;
    const ENode &x = eg_.node(a), &y = eg_.node(b);
    if (x.is_leaf() || x.is_opaque() || x.op != y.op || x.num_outputs != 1 || y.num_outputs != 1) return false;
    if (!(x.params == y.params) || x.children.size() != y.children.size()) return false;
    if (ops::IsConcat(*x.op) || ops::IsSplit(*x.op)) return false;  // joined as pieces themselves
    bool reads_pieces = false;
    for (size_t i = 0; i < x.children.size(); ++i) {
      const bool piece = eg_.Find(x.children[i]) == pieces[0] && eg_.Find(y.children[i]) == pieces[1];
      if (!piece && !(WeightOnly(x.children[i]) && WeightOnly(y.children[i]))) return false;
      reads_pieces |= piece;
    }
    const OutputType &tx = eg_.eclass(eg_.ClassOf(a)).type, &ty = eg_.eclass(eg_.ClassOf(b)).type;
    if (!reads_pieces || !tx.shape_known || !ty.shape_known || tx.shape.size() != ty.shape.size() ||
        axis >= static_cast<int64_t>(tx.shape.size()))
      return false;
    for (size_t d = 0; d < tx.shape.size(); ++d)
      if (static_cast<int64_t>(d) != axis && tx.shape[d] != ty.shape[d]) return false;
    return true;
  }

  bool WeightOnly(ClassId c) const { return c == kNoClass || eg_.eclass(c).weight_only; }

  // Concat(a, b) along `axis`, and its Split into a's and b's classes.
  void Join(const OpDef* split, ENodeId a, ENodeId b, int64_t axis) {
    const ENodeId first_new = eg_.num_node_ids();
    const ClassId ca = eg_.ClassOf(a), cb = eg_.ClassOf(b);
    const std::vector<int64_t> sizes = {eg_.eclass(ca).type.shape[axis], eg_.eclass(cb).type.shape[axis]};
    absl::StatusOr<std::vector<ClassId>> joined = eg_.AddOp(&ops::ConcatOperator(), ops::ConcatParams(axis), {ca, cb});
    if (joined.ok()) AddEqual(eg_, split, ops::SplitParams(axis, sizes), {(*joined)[0]}, {ca, cb});
    if (derivation_ != nullptr) derivation_->Record({a, b}, first_new, eg_.num_node_ids());
  }

  EGraph& eg_;
  const int64_t max_enodes_;
  Derivation* const derivation_;
};

}  // namespace

int64_t AddJoinedReaders(EGraph& egraph, int64_t max_enodes, Derivation* derivation) {
  return ReaderJoiner(egraph, max_enodes, derivation).Pass();
}

int64_t AddJoinedPieces(EGraph& egraph, int64_t max_split_enodes, int64_t max_concat_enodes) {
  return Joiner(egraph).Run(max_split_enodes, max_concat_enodes);
}

}  // namespace taso::egraph
