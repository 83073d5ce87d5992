#include "taso/passes/rewrite_gated_mixtures.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "taso/ir/graph_copy.h"
#include "taso/ir/status_macros.h"
// The operators this rewrite knows, through their accessors in ops/.
#include "taso/ir/ops/concat.h"
#include "taso/ir/ops/gated_mixture.h"

namespace taso {
namespace {

// One mixture: the sum's last Add, the gated terms in column order, the sum's other
// terms, the nodes the merge replaces, and the experts' first layers where they are one
// input's (`activation`: the first expert's activation node).
struct Mixture {
  NodeId root = kNoNode;
  ValueId gate = kNoValue;
  std::vector<ops::GatedTerm> terms;
  std::vector<ValueId> others;
  std::vector<NodeId> replaced;
  std::vector<ops::LinearLayer> first;
  NodeId activation = kNoNode;
};

class MixtureFinder {
 public:
  explicit MixtureFinder(const Graph& g) : g_(g), uses_(g) {}

  std::optional<Mixture> Find() const {
    for (NodeId n = 0; n < g_.num_nodes(); ++n) {
      if (!ops::SameShapeSum(g_, n) || InnerSum(g_.node(n).outputs[0]) != kNoNode) continue;
      if (std::optional<Mixture> found = AtSum(n)) return found;
    }
    return std::nullopt;
  }

 private:
  // The Add that reads `v` when `v` is a sum read by that Add alone.
  NodeId InnerSum(ValueId v) const {
    const NodeId reader = uses_.SoleReader(v);
    return reader != kNoNode && ops::SameShapeSum(g_, reader) ? reader : kNoNode;
  }

  // The terms of the sum at `sum` (operands of Adds read by the next Add alone), with the
  // Adds that compute it.
  void CollectTerms(NodeId sum, std::vector<ValueId>& terms, std::vector<NodeId>& sums) const {
    sums.push_back(sum);
    for (ValueId operand : g_.node(sum).inputs) {
      const NodeId producer = g_.value(operand).producer;
      if (producer != kNoNode && ops::SameShapeSum(g_, producer) && InnerSum(operand) == sum)
        CollectTerms(producer, terms, sums);
      else
        terms.push_back(operand);
    }
  }

  std::optional<Mixture> AtSum(NodeId root) const {
    std::vector<ValueId> terms;
    std::vector<NodeId> sums;
    CollectTerms(root, terms, sums);
    std::map<ValueId, std::vector<ops::GatedTerm>> by_gate;
    for (ValueId term : terms) {
      const NodeId mul = g_.value(term).producer;
      if (mul == kNoNode || uses_.SoleReader(term) == kNoNode) continue;
      if (std::optional<ops::GatedTerm> gated = ops::MatchGatedTerm(g_, uses_, mul))
        by_gate[gated->gate].push_back(*gated);
    }
    for (auto& [gate, gated] : by_gate) {
      std::optional<std::vector<ops::GatedTerm>> columns = EveryColumnOnce(gate, std::move(gated));
      if (!columns) continue;
      Mixture m{root, gate, std::move(*columns), {}, sums, {}, kNoNode};
      for (ValueId term : terms)
        if (!IsGatedTerm(m, term)) m.others.push_back(term);
      for (const ops::GatedTerm& t : m.terms) {
        m.replaced.insert(m.replaced.end(), {t.mul, t.layer.node});
        if (t.layer.product != t.layer.node) m.replaced.push_back(t.layer.product);
        if (ReadOnlyByTerms(m, g_.node(t.slice).outputs[0])) m.replaced.push_back(t.slice);
      }
      FindSharedFirstLayers(m);
      return m;
    }
    return std::nullopt;
  }

  bool IsGatedTerm(const Mixture& m, ValueId term) const {
    for (const ops::GatedTerm& t : m.terms)
      if (g_.value(term).producer == t.mul) return true;
    return false;
  }

  // Whether only the mixture's terms read `v` (a column of the gate), so that it goes with them.
  bool ReadOnlyByTerms(const Mixture& m, ValueId v) const {
    if (uses_.is_graph_output(v)) return false;
    for (NodeId reader : uses_.readers(v)) {
      bool is_term = false;
      for (const ops::GatedTerm& t : m.terms) is_term = is_term || t.mul == reader;
      if (!is_term) return false;
    }
    return true;
  }

  // The terms in column order when there is one per column of the gate (at least two),
  // their layers alike and of hidden units of one shape.
  std::optional<std::vector<ops::GatedTerm>> EveryColumnOnce(ValueId gate, std::vector<ops::GatedTerm> terms) const {
    const int64_t n = g_.value(gate).shape.back();
    if (n < 2 || static_cast<int64_t>(terms.size()) != n) return std::nullopt;
    std::vector<std::optional<ops::GatedTerm>> by_column(n);
    for (ops::GatedTerm& t : terms) {
      if (by_column[t.column]) return std::nullopt;
      by_column[t.column] = t;
    }
    std::vector<ops::GatedTerm> ordered;
    for (const auto& t : by_column) {
      const ops::LinearLayer& first = by_column[0]->layer;
      if (!ops::LayersAlike(g_, first, t->layer) || g_.value(first.x).shape != g_.value(t->layer.x).shape)
        return std::nullopt;
      ordered.push_back(*t);
    }
    return ordered;
  }

  // Sets m.first and m.activation where every expert's hidden units are act(x V_e + c_e)
  // of one x and one activation, each read by the next node alone.
  void FindSharedFirstLayers(Mixture& m) const {
    std::vector<ops::LinearLayer> first;
    std::vector<NodeId> activations;
    for (const ops::GatedTerm& t : m.terms) {
      const ValueId hidden = t.layer.x;
      const NodeId act = g_.value(hidden).producer;
      if (act == kNoNode || uses_.SoleReader(hidden) != t.layer.product || !ops::IsElementwiseActivation(g_.node(act)))
        return;
      const ValueId pre = g_.node(act).inputs[0];
      const NodeId layer_node = g_.value(pre).producer;
      if (layer_node == kNoNode || uses_.SoleReader(pre) != act) return;
      const std::optional<ops::LinearLayer> layer = ops::MatchLinearLayer(g_, uses_, layer_node);
      if (!layer) return;
      const Node &a = g_.node(act), &a0 = g_.node(activations.empty() ? act : activations[0]);
      if (!first.empty() && (layer->x != first[0].x || !ops::LayersAlike(g_, first[0], *layer))) return;
      if (a.op != a0.op || !(a.params == a0.params)) return;
      first.push_back(*layer);
      activations.push_back(act);
    }
    m.first = std::move(first);
    m.activation = activations[0];
    for (size_t e = 0; e < activations.size(); ++e) {
      m.replaced.insert(m.replaced.end(), {activations[e], m.first[e].node});
      if (m.first[e].product != m.first[e].node) m.replaced.push_back(m.first[e].product);
    }
  }

  const Graph& g_;
  const UseIndex uses_;
};

// The new graph's values of the layers' weights and biases.
absl::StatusOr<std::vector<ops::LayerWeights>> NewWeights(GraphCopy& copy,
                                                          const std::vector<ops::LinearLayer>& layers) {
  std::vector<ops::LayerWeights> out;
  for (const ops::LinearLayer& layer : layers) {
    ops::LayerWeights w;
    ASSIGN_OR_RETURN(w.weights, copy.Use(layer.weights));
    if (layer.bias != kNoValue) {
      ASSIGN_OR_RETURN(w.bias, copy.Use(layer.bias));
    }
    out.push_back(w);
  }
  return out;
}

// The experts' hidden units side by side, in the new graph.
absl::StatusOr<ValueId> AddHidden(GraphCopy& copy, const Mixture& m,
                                  absl::FunctionRef<std::string(absl::string_view)> fresh) {
  Graph& g = copy.graph();
  if (m.first.empty()) {
    std::vector<ValueId> parts;
    for (const ops::GatedTerm& t : m.terms) {
      ASSIGN_OR_RETURN(ValueId part, copy.Use(t.layer.x));
      parts.push_back(part);
    }
    ASSIGN_OR_RETURN(std::vector<ValueId> joined,
                     g.AddNode(&ops::ConcatOperator(), ops::ConcatParams(-1), parts, "", {fresh("experts_hidden")}));
    return joined[0];
  }
  ASSIGN_OR_RETURN(const std::vector<ops::LayerWeights> layers, NewWeights(copy, m.first));
  ASSIGN_OR_RETURN(const ValueId x, copy.Use(m.first[0].x));
  ASSIGN_OR_RETURN(const ValueId wide, ops::AddSideBySide(g, x, layers, m.first[0], fresh));
  const Node& act = copy.old().node(m.activation);
  ASSIGN_OR_RETURN(std::vector<ValueId> hidden,
                   copy.AddNodeLike(m.activation, act.params, {wide}, {fresh("experts_hidden")}));
  return hidden[0];
}

// The mixture's sum, merged, standing for the old sum's value.
absl::Status AddMerged(GraphCopy& copy, const Mixture& m) {
  auto fresh = [&copy](absl::string_view base) { return copy.FreshName(base, NameStyle::kNumbered); };
  const Graph& old = copy.old();
  const ValueId sum = old.node(m.root).outputs[0];
  ASSIGN_OR_RETURN(const ValueId hidden, AddHidden(copy, m, fresh));
  std::vector<ops::LinearLayer> second;
  for (const ops::GatedTerm& t : m.terms) second.push_back(t.layer);
  ASSIGN_OR_RETURN(const std::vector<ops::LayerWeights> layers, NewWeights(copy, second));
  ASSIGN_OR_RETURN(const ValueId gate, copy.Use(m.gate));
  const std::string& name = old.value(sum).name;
  ASSIGN_OR_RETURN(ValueId merged, ops::AddGatedStack(copy.graph(), hidden, gate, layers, m.terms[0].layer,
                                                      m.others.empty() ? name : fresh(name), fresh));
  for (size_t k = 0; k < m.others.size(); ++k) {
    ASSIGN_OR_RETURN(const ValueId other, copy.Use(m.others[k]));
    const std::string out = k + 1 == m.others.size() ? name : fresh(name);
    ASSIGN_OR_RETURN(const std::vector<ValueId> added,
                     copy.AddNodeLike(m.root, old.node(m.root).params, {merged, other}, {out}));
    merged = added[0];
  }
  copy.Replace(sum, merged);
  return absl::OkStatus();
}

absl::StatusOr<Graph> Apply(const Graph& g, const Mixture& m) {
  GraphCopy copy(g);
  RETURN_IF_ERROR(copy.CopyInputs());
  ASSIGN_OR_RETURN(const std::vector<NodeId> order, g.TopologicalOrder());
  std::vector<bool> replaced(g.num_nodes(), false);
  for (NodeId n : m.replaced) replaced[n] = true;
  for (NodeId n : order) {
    if (n == m.root) {
      RETURN_IF_ERROR(AddMerged(copy, m));
    } else if (!replaced[n]) {
      RETURN_IF_ERROR(copy.CopyNode(n));
    }
  }
  return copy.Finish();
}

}  // namespace

absl::StatusOr<GatedMixturesMerged> MergeGatedMixtures(const Graph& graph) {
  GatedMixturesMerged out{graph, 0};
  for (;;) {
    const std::optional<Mixture> mixture = MixtureFinder(out.graph).Find();
    if (!mixture) return out;
    ASSIGN_OR_RETURN(out.graph, Apply(out.graph, *mixture));
    ++out.mixtures;
  }
}

}  // namespace taso
