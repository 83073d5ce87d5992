#include "taso/inference_fusion.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "graph_copy.h"
#include "taso/status_macros.h"

namespace taso {
namespace {

const OpDef& Op(absl::string_view name) { return *OpRegistry::Global().Find(name); }

// The operator that applies a convolution's activation on its own (Relu for "relu").
const OpDef* ActivationOp(absl::string_view activation) {
  for (const OpDef* op : OpRegistry::Global().All())
    if (op->AsConvActivation() == activation) return op;
  return nullptr;
}

const TensorData* FloatConstant(const Graph& g, ValueId v) {
  const TensorData* d = v == kNoValue ? nullptr : g.ConstantData(v);
  return d && d->dtype() == DataType::kFloat32 ? d : nullptr;
}

// What one pass needs to know of the old graph.
struct Readers {
  explicit Readers(const Graph& g) : graph(g), consumers(g.Consumers()), is_output(g.num_values(), false) {
    for (ValueId v : g.outputs()) is_output[v] = true;
  }
  // The one node that reads `v` (once), when `v` is not a graph output.
  NodeId Sole(ValueId v) const {
    if (is_output[v] || consumers[v].size() != 1) return kNoNode;
    const Node& n = graph.node(consumers[v][0]);
    return std::count(n.inputs.begin(), n.inputs.end(), v) == 1 ? consumers[v][0] : kNoNode;
  }
  const Graph& graph;
  std::vector<std::vector<NodeId>> consumers;
  std::vector<bool> is_output;
};

// A per-channel affine map y = x * scale + shift, then maybe an activation, that a chain
// of nodes after a value of shape [N, C, H, W] computes (each node says what it computes:
// OpDef::AsChannelAffine, OpDef::AsConvActivation).
struct Chain {
  std::vector<NodeId> nodes;
  ValueId last = kNoValue;
  std::vector<float> scale, shift;
  std::string activation;  // empty: none
};

Chain FollowChain(const Readers& r, ValueId start, bool allow_activation) {
  const Graph& g = r.graph;
  Chain c;
  c.last = start;
  const Shape& shape = g.value(start).shape;
  if (shape.size() != 4) return c;
  c.scale.assign(shape[1], 1.0f);
  c.shift.assign(shape[1], 0.0f);
  for (NodeId n = r.Sole(start); n != kNoNode && c.activation.empty(); n = r.Sole(c.last)) {
    const Node& node = g.node(n);
    if (node.outputs.size() != 1 || g.value(node.outputs[0]).shape != shape) break;
    const size_t data = std::find(node.inputs.begin(), node.inputs.end(), c.last) - node.inputs.begin();
    if (auto m = node.op->AsChannelAffine(node.params, g.InputInfos(node), data)) {
      for (size_t k = 0; k < c.scale.size(); ++k) {
        c.scale[k] *= m->scale[k];
        c.shift[k] = c.shift[k] * m->scale[k] + m->shift[k];
      }
    } else if (allow_activation && !node.op->AsConvActivation().empty()) {
      c.activation = std::string(node.op->AsConvActivation());
    } else {
      break;
    }
    c.nodes.push_back(n);
    c.last = node.outputs[0];
  }
  return c;
}

std::string FreshName(const Graph& old, const Graph& made, const std::string& base) {
  std::string name = base;
  for (int i = 2; old.FindValue(name) != kNoValue || made.FindValue(name) != kNoValue; ++i)
    name = absl::StrCat(base, "_", i);
  return name;
}

class ConvolutionFuser {
 public:
  explicit ConvolutionFuser(const Graph& g) : g_(g), readers_(g), copy_(g), absorbed_(g.num_nodes(), false) {}

  absl::StatusOr<Graph> Run() {
    ASSIGN_OR_RETURN(std::vector<NodeId> order, g_.TopologicalOrder());
    RETURN_IF_ERROR(copy_.CopyInputs());
    for (NodeId n : order) {
      if (absorbed_[n]) continue;
      ASSIGN_OR_RETURN(bool fused, TryFuse(n));
      if (!fused) RETURN_IF_ERROR(copy_.CopyNode(n));
    }
    return copy_.Finish();
  }

 private:
  // A convolution with constant weights and bias, no activation yet.
  bool Fusable(const Node& node) const {
    if (node.op->name() != "Conv2D" || node.params.Str("activation", "none") != "none") return false;
    if (!FloatConstant(g_, node.inputs[1])) return false;
    return node.inputs.size() < 3 || node.inputs[2] == kNoValue || FloatConstant(g_, node.inputs[2]);
  }

  absl::StatusOr<bool> TryFuse(NodeId n) {
    const Node& conv = g_.node(n);
    if (!Fusable(conv)) return false;
    const ValueId y = conv.outputs[0];
    Chain chain = FollowChain(readers_, y, true);
    if (!chain.nodes.empty()) {
      ASSIGN_OR_RETURN(ValueId out, AddConv(conv, chain, g_.value(chain.last).name));
      Absorb(chain, out);
      return true;
    }
    // Through a split along the channels whose every piece is followed alike.
    const NodeId s = readers_.Sole(y);
    if (s == kNoNode) return false;
    const Node& split = g_.node(s);
    if (split.op->name() != "Split" || split.inputs.size() != 1) return false;
    const int64_t axis = split.params.Int("axis", 0);
    if (axis != 1 && axis != -3) return false;
    std::vector<Chain> pieces;
    for (bool allow_activation : {true, false}) {
      pieces.clear();
      for (ValueId piece : split.outputs) pieces.push_back(FollowChain(readers_, piece, allow_activation));
      bool same = true;
      for (const Chain& p : pieces) same = same && !p.nodes.empty() && p.activation == pieces[0].activation;
      if (same) break;
      pieces.clear();
    }
    if (pieces.empty()) return false;
    Chain whole;
    whole.activation = pieces[0].activation;
    for (const Chain& p : pieces) {
      whole.scale.insert(whole.scale.end(), p.scale.begin(), p.scale.end());
      whole.shift.insert(whole.shift.end(), p.shift.begin(), p.shift.end());
    }
    ASSIGN_OR_RETURN(ValueId out, AddConv(conv, whole, g_.value(y).name));
    std::vector<std::string> names;
    for (const Chain& p : pieces) names.push_back(g_.value(p.last).name);
    ASSIGN_OR_RETURN(std::vector<ValueId> outs,
                     copy_.graph().AddNode(split.op, split.params, {out}, split.name, std::move(names)));
    absorbed_[s] = true;
    for (size_t k = 0; k < pieces.size(); ++k) Absorb(pieces[k], outs[k]);
    return true;
  }

  // The convolution with the chain's affine map folded into its weights and bias.
  absl::StatusOr<ValueId> AddConv(const Node& conv, const Chain& chain, const std::string& out_name) {
    const TensorData& w = *FloatConstant(g_, conv.inputs[1]);
    const TensorData* b = conv.inputs.size() > 2 ? FloatConstant(g_, conv.inputs[2]) : nullptr;
    const int64_t channels = w.shape()[0];
    if (static_cast<int64_t>(chain.scale.size()) != channels)
      return absl::InternalError("a fused chain's channels differ from the convolution's");
    std::vector<float> weights(w.floats().begin(), w.floats().end()), bias(channels);
    const int64_t per = w.numel() / channels;
    bool unit_scale = true, needs_bias = b != nullptr;
    for (int64_t o = 0; o < channels; ++o) {
      for (int64_t i = 0; i < per; ++i) weights[o * per + i] *= chain.scale[o];
      bias[o] = (b ? b->floats()[o] : 0.0f) * chain.scale[o] + chain.shift[o];
      unit_scale = unit_scale && chain.scale[o] == 1.0f;
      needs_bias = needs_bias || bias[o] != 0.0f;
    }
    Graph& made = copy_.graph();
    const std::string base = g_.value(conv.inputs[1]).name;
    ASSIGN_OR_RETURN(ValueId x, copy_.Use(conv.inputs[0]));
    std::vector<ValueId> inputs = {x};
    if (unit_scale) {
      ASSIGN_OR_RETURN(ValueId wv, copy_.Use(conv.inputs[1]));
      inputs.push_back(wv);
    } else {
      ASSIGN_OR_RETURN(ValueId wv, made.AddWeight(FreshName(g_, made, base + "_fused"), TensorData::Float(w.shape(), weights)));
      inputs.push_back(wv);
    }
    // Without a bias before or after, the convolution stays without one (as the rules take it).
    if (needs_bias) {
      ASSIGN_OR_RETURN(ValueId bv, made.AddWeight(FreshName(g_, made, base + "_fused_bias"), TensorData::Float({channels}, bias)));
      inputs.push_back(bv);
    }
    Params p = conv.params;
    p.Set("activation", chain.activation.empty() ? "none" : chain.activation);
    ASSIGN_OR_RETURN(std::vector<ValueId> outs, made.AddNode(conv.op, p, std::move(inputs), conv.name, {out_name}));
    return outs[0];
  }

  void Absorb(const Chain& chain, ValueId now) {
    for (NodeId n : chain.nodes) absorbed_[n] = true;
    copy_.Replace(chain.last, now);
  }

  const Graph& g_;
  Readers readers_;
  GraphCopy copy_;
  std::vector<bool> absorbed_;
};

}  // namespace

absl::StatusOr<Graph> FuseIntoConvolutions(const Graph& graph) { return ConvolutionFuser(graph).Run(); }

absl::StatusOr<Graph> SeparateConvolutionBias(const Graph& graph) {
  ASSIGN_OR_RETURN(std::vector<NodeId> order, graph.TopologicalOrder());
  GraphCopy copy(graph);
  RETURN_IF_ERROR(copy.CopyInputs());
  for (NodeId n : order) {
    const Node& node = graph.node(n);
    const TensorData* bias = node.inputs.size() == 3 ? FloatConstant(graph, node.inputs[2]) : nullptr;
    std::vector<InputInfo> infos = graph.InputInfos(node);
    infos.resize(std::min<size_t>(infos.size(), 2));
    if (node.op->name() != "Conv2D" || !bias || !node.op->RuleParams(node.params, infos)) {
      RETURN_IF_ERROR(copy.CopyNode(n));
      continue;
    }
    Graph& made = copy.graph();
    const ValueId y = node.outputs[0];
    const std::string activation = node.params.Str("activation", "none");
    const OpDef* activation_op = activation == "none" ? nullptr : ActivationOp(activation);
    if (activation != "none" && !activation_op) {
      RETURN_IF_ERROR(copy.CopyNode(n));
      continue;
    }
    const int64_t channels = bias->numel();
    ASSIGN_OR_RETURN(ValueId x, copy.Use(node.inputs[0]));
    ASSIGN_OR_RETURN(ValueId w, copy.Use(node.inputs[1]));
    ASSIGN_OR_RETURN(ValueId b, made.AddWeight(FreshName(graph, made, graph.value(node.inputs[2]).name + "_nchw"),
                                              TensorData::Float({1, channels, 1, 1}, std::vector<float>(
                                                                                          bias->floats().begin(), bias->floats().end()))));
    Params p = node.params;
    p.Set("activation", "none");
    ASSIGN_OR_RETURN(std::vector<ValueId> conv, made.AddNode(node.op, p, {x, w}, node.name));
    const std::string& name = graph.value(y).name;
    ASSIGN_OR_RETURN(std::vector<ValueId> added, made.AddNode(&Op("Add"), Params(), {conv[0], b}, "",
                                                              activation_op ? std::vector<std::string>{} : std::vector{name}));
    if (activation_op) {
      ASSIGN_OR_RETURN(added, made.AddNode(activation_op, Params(), {added[0]}, "", {name}));
    }
    copy.Replace(y, added[0]);
  }
  return copy.Finish();
}

}  // namespace taso
