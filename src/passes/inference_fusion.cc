#include "taso/passes/inference_fusion.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "taso/ir/graph_copy.h"
#include "taso/ir/status_macros.h"

// The operators these fusions know, through their accessors in ops/.
#include "taso/ir/ops/add.h"
#include "taso/ir/ops/conv2d.h"
#include "taso/ir/ops/split.h"

namespace taso {
namespace {

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

// A per-channel affine map y = x * scale + shift, then maybe an activation, that a chain
// of nodes after a value of shape [N, C, H, W] computes (each node says what it computes:
// OpDef::AsChannelAffine, OpDef::AsConvActivation).
struct Chain {
  std::vector<NodeId> nodes;
  ValueId last = kNoValue;
  std::vector<float> scale, shift;
  std::string activation;  // empty: none
};

Chain FollowChain(const Graph& g, const UseIndex& uses, ValueId start, bool allow_activation) {
  Chain c;
  c.last = start;
  const Shape& shape = g.value(start).shape;
  if (shape.size() != 4) return c;
  c.scale.assign(shape[1], 1.0f);
  c.shift.assign(shape[1], 0.0f);
  for (NodeId n = uses.SoleReader(start); n != kNoNode && c.activation.empty(); n = uses.SoleReader(c.last)) {
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

class ConvolutionFuser {
 public:
  explicit ConvolutionFuser(const Graph& g) : g_(g), uses_(g), copy_(g), absorbed_(g.num_nodes(), false) {}

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
    if (!ops::IsConv2D(*node.op) || !ops::ConvActivation(node.params).empty()) return false;
    if (!FloatConstant(g_, node.inputs[1])) return false;
    return node.inputs.size() < 3 || node.inputs[2] == kNoValue || FloatConstant(g_, node.inputs[2]);
  }

  // Fuses what follows convolution n into it, directly or through a channel split; false
  // when nothing does.
  absl::StatusOr<bool> TryFuse(NodeId n) {
    const Node& conv = g_.node(n);
    if (!Fusable(conv)) return false;
    Chain chain = FollowChain(g_, uses_, conv.outputs[0], true);
    if (chain.nodes.empty()) return TryFuseThroughSplit(conv);
    ASSIGN_OR_RETURN(ValueId out, AddConv(conv, chain, g_.value(chain.last).name));
    Absorb(chain, out);
    return true;
  }

  // Through a split along the channels whose every piece is followed alike.
  absl::StatusOr<bool> TryFuseThroughSplit(const Node& conv) {
    const ValueId y = conv.outputs[0];
    const NodeId s = uses_.SoleReader(y);
    if (s == kNoNode) return false;
    const Node& split = g_.node(s);
    if (!ops::IsSplit(*split.op) || split.inputs.size() != 1) return false;
    const int64_t axis = ops::SplitAxis(split.params);
    if (axis != 1 && axis != -3) return false;
    const std::vector<Chain> pieces = AlikeChains(split.outputs);
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

  // The chains after the given values when each has one and all end alike (with the same
  // activation, or none); else empty.
  std::vector<Chain> AlikeChains(const std::vector<ValueId>& starts) const {
    for (bool allow_activation : {true, false}) {
      std::vector<Chain> chains;
      for (ValueId v : starts) chains.push_back(FollowChain(g_, uses_, v, allow_activation));
      bool same = true;
      for (const Chain& c : chains) same = same && !c.nodes.empty() && c.activation == chains[0].activation;
      if (same) return chains;
    }
    return {};
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
      ASSIGN_OR_RETURN(ValueId wv, made.AddWeight(copy_.FreshName(base + "_fused", NameStyle::kBaseThenNumbered),
                                                  TensorData::Float(w.shape(), weights)));
      inputs.push_back(wv);
    }
    // Without a bias before or after, the convolution stays without one (as the rules take it).
    if (needs_bias) {
      ASSIGN_OR_RETURN(ValueId bv, made.AddWeight(copy_.FreshName(base + "_fused_bias", NameStyle::kBaseThenNumbered),
                                                  TensorData::Float({channels}, bias)));
      inputs.push_back(bv);
    }
    ASSIGN_OR_RETURN(std::vector<ValueId> outs,
                     made.AddNode(conv.op, ops::WithConvActivation(conv.params, chain.activation), std::move(inputs),
                                  conv.name, {out_name}));
    return outs[0];
  }

  void Absorb(const Chain& chain, ValueId now) {
    for (NodeId n : chain.nodes) absorbed_[n] = true;
    copy_.Replace(chain.last, now);
  }

  const Graph& g_;
  UseIndex uses_;
  GraphCopy copy_;
  std::vector<bool> absorbed_;
};

// Adds node n as Conv -> Add(bias [1,C,1,1]) -> activation when it is a convolution
// with a constant bias whose bias-free form the rules match; false (nothing added) when
// it is not.
absl::StatusOr<bool> SeparateBias(const Graph& graph, NodeId n, GraphCopy& copy) {
  const Node& node = graph.node(n);
  const TensorData* bias = node.inputs.size() == 3 ? FloatConstant(graph, node.inputs[2]) : nullptr;
  std::vector<InputInfo> infos = graph.InputInfos(node);
  infos.resize(std::min<size_t>(infos.size(), 2));
  if (!ops::IsConv2D(*node.op) || !bias || !node.op->RuleParams(node.params, infos)) return false;
  const std::string activation = ops::ConvActivation(node.params);
  const OpDef* activation_op = activation.empty() ? nullptr : ActivationOp(activation);
  if (!activation.empty() && !activation_op) return false;

  Graph& made = copy.graph();
  ASSIGN_OR_RETURN(ValueId x, copy.Use(node.inputs[0]));
  ASSIGN_OR_RETURN(ValueId w, copy.Use(node.inputs[1]));
  const std::string bias_name =
      copy.FreshName(graph.value(node.inputs[2]).name + "_nchw", NameStyle::kBaseThenNumbered);
  ASSIGN_OR_RETURN(
      ValueId b,
      made.AddWeight(bias_name, TensorData::Float({1, bias->numel(), 1, 1},
                                                  std::vector<float>(bias->floats().begin(), bias->floats().end()))));
  ASSIGN_OR_RETURN(std::vector<ValueId> conv,
                   made.AddNode(node.op, ops::WithConvActivation(node.params, ""), {x, w}, node.name));
  const std::string& name = graph.value(node.outputs[0]).name;
  ASSIGN_OR_RETURN(std::vector<ValueId> added,
                   made.AddNode(&ops::AddOp(), Params(), {conv[0], b}, "",
                                activation_op ? std::vector<std::string>{} : std::vector{name}));
  if (activation_op) {
    ASSIGN_OR_RETURN(added, made.AddNode(activation_op, Params(), {added[0]}, "", {name}));
  }
  copy.Replace(node.outputs[0], added[0]);
  return true;
}

}  // namespace

absl::StatusOr<Graph> FuseIntoConvolutions(const Graph& graph) { return ConvolutionFuser(graph).Run(); }

absl::StatusOr<Graph> SeparateConvolutionBias(const Graph& graph) {
  ASSIGN_OR_RETURN(std::vector<NodeId> order, graph.TopologicalOrder());
  GraphCopy copy(graph);
  RETURN_IF_ERROR(copy.CopyInputs());
  for (NodeId n : order) {
    ASSIGN_OR_RETURN(bool separated, SeparateBias(graph, n, copy));
    if (!separated) RETURN_IF_ERROR(copy.CopyNode(n));
  }
  return copy.Finish();
}

}  // namespace taso
