#include "taso/layouts.h"

#include <array>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "backends/cpu_kernel.h"
#include "graph_copy.h"
#include "taso/status_macros.h"

namespace taso {
namespace {

using cpu::WithLayout;

bool IsFloat(const Graph& g, ValueId v) { return v != kNoValue && g.value(v).dtype == DataType::kFloat32; }

}  // namespace

namespace internal {

// What the cost of a layout choice needs to know of a graph, each fact found once.
class LayoutContext {
 public:
  LayoutContext(const Graph& g, CpuCost& cost)
      : g_(g),
        cost_(cost),
        weight_only_(FindWeightOnly(g)),
        consumers_(g.Consumers()),
        is_output_(g.num_values()),
        can_block_(g.num_nodes(), -1),
        layout_inputs_(g.num_nodes()),
        node_cost_(g.num_nodes(), {-1, -1}),
        convert_cost_(g.num_values(), {-1, -1}) {
    for (ValueId v : g.outputs()) is_output_[v] = true;
  }

  const Graph& graph() const { return g_; }
  bool IsWeightOnly(NodeId n) const { return weight_only_.nodes[n]; }
  const std::vector<NodeId>& Consumers(ValueId v) const { return consumers_[v]; }
  bool IsOutput(ValueId v) const { return is_output_[v]; }

  // Whether node n could run blocked: a kernel that takes the layout, shapes that block,
  // and a measured blocked cost.
  bool CanBlock(NodeId n) {
    if (can_block_[n] < 0) can_block_[n] = FindCanBlock(n);
    return can_block_[n];
  }

  double NodeCost(NodeId n, bool blocked) {
    double& c = node_cost_[n][blocked];
    if (c < 0) {
      const Node& node = g_.node(n);
      c = cost_.Cost(*node.op, WithLayout(node.params, blocked), g_.InputInfos(node), g_.OutputTypes(node));
    }
    return c;
  }

  // Whether node n, in the given layout, reads its input i blocked.
  bool ReadsBlocked(NodeId n, bool blocked, size_t i) {
    if (!blocked || !CanBlock(n)) return false;
    const std::vector<size_t>& li = layout_inputs_[n];
    return std::find(li.begin(), li.end(), i) != li.end();
  }

  double ConvertCost(ValueId v, bool to_blocked) {
    double& c = convert_cost_[v][to_blocked];
    if (c < 0) {
      static const OpDef* convert = OpRegistry::Global().Find("LayoutConvert");
      InputInfo in;
      in.shape = g_.value(v).shape;
      c = cost_.Cost(*convert, WithLayout(Params(), to_blocked), {in}, {OutputType{DataType::kFloat32, in.shape}});
    }
    return c;
  }

  // Whether some reader of v could read it blocked (so a blocked producer need not
  // convert it back at once).
  bool ReaderCouldBlock(ValueId v) {
    if (is_output_[v]) return false;
    for (NodeId c : consumers_[v])
      if (CanBlock(c)) return true;
    return false;
  }

 private:
  bool FindCanBlock(NodeId n) {
    const Node& node = g_.node(n);
    const cpu::Kernel* k = cpu::FindKernel(node.op->name());
    if (!k || weight_only_.nodes[n]) return false;
    const std::vector<InputInfo> in = g_.InputInfos(node);
    const std::vector<OutputType> out = g_.OutputTypes(node);
    if (!cpu::CanRunBlocked(*k, node.params, in, out)) return false;
    const Params bp = WithLayout(node.params, true);
    layout_inputs_[n] = k->LayoutInputs(bp, in);
    bool measured = false;
    node_cost_[n][1] = cost_.Cost(*node.op, bp, in, out, &measured);
    return measured;
  }

  const Graph& g_;
  CpuCost& cost_;
  taso::WeightOnly weight_only_;
  std::vector<std::vector<NodeId>> consumers_;
  std::vector<bool> is_output_;
  std::vector<int8_t> can_block_;
  std::vector<std::vector<size_t>> layout_inputs_;
  std::vector<std::array<double, 2>> node_cost_;
  std::vector<std::array<double, 2>> convert_cost_;
};

}  // namespace internal

namespace {

using internal::LayoutContext;

bool WritesBlocked(const Graph& g, const CpuLayouts::Plan& plan, ValueId v) {
  const NodeId p = g.value(v).producer;
  return p != kNoNode && plan.blocked[p] && cpu::Blockable(g.value(v).shape);
}

}  // namespace

CpuLayouts::Plan CpuLayouts::AllPlain(const Graph& graph) {
  Plan plan;
  plan.blocked.assign(graph.num_nodes(), false);
  LayoutContext ctx(graph, cost_);
  Evaluate(ctx, plan);
  return plan;
}

CpuLayouts::Plan CpuLayouts::Choose(const Graph& graph) {
  Plan plan;
  plan.blocked.assign(graph.num_nodes(), false);
  auto order = graph.TopologicalOrder();
  if (!order.ok()) return plan;
  LayoutContext ctx(graph, cost_);
  absl::flat_hash_set<std::pair<ValueId, bool>> converted;  // conversions already paid for
  for (NodeId n : *order) {
    if (ctx.IsWeightOnly(n) || !ctx.CanBlock(n)) continue;
    const Node& node = graph.node(n);
    double cost[2];
    for (bool blocked : {false, true}) {
      double c = ctx.NodeCost(n, blocked);
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        const ValueId v = node.inputs[i];
        if (!IsFloat(graph, v)) continue;
        const bool want = ctx.ReadsBlocked(n, blocked, i);
        if (want != WritesBlocked(graph, plan, v) && !converted.contains({v, want})) c += ctx.ConvertCost(v, want);
      }
      if (blocked)
        for (ValueId v : node.outputs)
          if (!ctx.ReaderCouldBlock(v)) c += ctx.ConvertCost(v, false);
      cost[blocked] = c;
    }
    plan.blocked[n] = cost[1] < cost[0];
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId v = node.inputs[i];
      if (!IsFloat(graph, v)) continue;
      const bool want = ctx.ReadsBlocked(n, plan.blocked[n], i);
      if (want != WritesBlocked(graph, plan, v)) converted.insert({v, want});
    }
  }
  Evaluate(ctx, plan);
  // Greedy choices can add up to more than running everything plain: then run it plain.
  Plan plain;
  plain.blocked.assign(graph.num_nodes(), false);
  Evaluate(ctx, plain);
  return plain.seconds <= plan.seconds ? plain : plan;
}

// The exact cost of a plan: every node in its layout, and each value converted once for
// each layout it is read in other than its own (graph outputs are read plain).
double CpuLayouts::Evaluate(internal::LayoutContext& ctx, Plan& plan) {
  const Graph& graph = ctx.graph();
  double total = 0;
  plan.conversions = 0;
  for (NodeId n = 0; n < graph.num_nodes(); ++n)
    if (!ctx.IsWeightOnly(n)) total += ctx.NodeCost(n, plan.blocked[n]);
  for (ValueId v = 0; v < graph.num_values(); ++v) {
    if (!IsFloat(graph, v)) continue;
    const bool own = WritesBlocked(graph, plan, v);
    bool read_other = own && ctx.IsOutput(v);
    for (NodeId c : ctx.Consumers(v)) {
      if (ctx.IsWeightOnly(c)) continue;
      const Node& node = graph.node(c);
      for (size_t i = 0; i < node.inputs.size(); ++i)
        if (node.inputs[i] == v && ctx.ReadsBlocked(c, plan.blocked[c], i) != own) read_other = true;
    }
    if (read_other) {
      total += ctx.ConvertCost(v, !own);
      ++plan.conversions;
    }
  }
  plan.seconds = total;
  return total;
}

absl::StatusOr<Graph> CpuLayouts::Apply(const Graph& graph, const Plan& plan) {
  ASSIGN_OR_RETURN(std::vector<NodeId> order, graph.TopologicalOrder());
  LayoutContext ctx(graph, cost_);
  const OpDef* convert = OpRegistry::Global().Find("LayoutConvert");
  GraphCopy copy(graph);
  RETURN_IF_ERROR(copy.CopyInputs());
  Graph& made = copy.graph();
  // Each old value as made (in its producer's layout), and its conversions.
  std::vector<ValueId> as_made(graph.num_values(), kNoValue);
  absl::flat_hash_map<std::pair<ValueId, bool>, ValueId> conversions;
  auto use = [&](ValueId v, bool want_blocked) -> absl::StatusOr<ValueId> {
    if (as_made[v] == kNoValue) {
      ASSIGN_OR_RETURN(as_made[v], copy.Use(v));
    }
    if (!IsFloat(graph, v) || want_blocked == WritesBlocked(graph, plan, v)) return as_made[v];
    auto it = conversions.find({v, want_blocked});
    if (it != conversions.end()) return it->second;
    ASSIGN_OR_RETURN(std::vector<ValueId> out, made.AddNode(convert, WithLayout(Params(), want_blocked), {as_made[v]}));
    conversions[{v, want_blocked}] = out[0];
    return out[0];
  };
  for (NodeId n : order) {
    const Node& node = graph.node(n);
    const bool blocked = plan.blocked[n];
    std::vector<ValueId> inputs;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.inputs[i] == kNoValue) {
        inputs.push_back(kNoValue);
        continue;
      }
      ASSIGN_OR_RETURN(ValueId v, use(node.inputs[i], !ctx.IsWeightOnly(n) && ctx.ReadsBlocked(n, blocked, i)));
      inputs.push_back(v);
    }
    std::vector<std::string> names;
    for (ValueId v : node.outputs)
      names.push_back(WritesBlocked(graph, plan, v) && ctx.IsOutput(v) ? absl::StrCat(graph.value(v).name, "_blocked")
                                                                       : graph.value(v).name);
    std::vector<ValueId> outs;
    if (node.op->is_opaque()) {
      ASSIGN_OR_RETURN(outs, made.AddOpaqueNode(node.onnx_node, std::move(inputs), std::move(names), graph.OutputTypes(node)));
    } else {
      ASSIGN_OR_RETURN(outs, made.AddNode(node.op, WithLayout(node.params, blocked), std::move(inputs), node.name,
                                          std::move(names)));
    }
    for (size_t k = 0; k < outs.size(); ++k) {
      const ValueId old = node.outputs[k];
      as_made[old] = outs[k];
      copy.Replace(old, outs[k]);
      if (WritesBlocked(graph, plan, old) && ctx.IsOutput(old)) {
        ASSIGN_OR_RETURN(std::vector<ValueId> plain, made.AddNode(convert, Params(), {outs[k]}, "",
                                                                  {graph.value(old).name}));
        conversions[{old, false}] = plain[0];
        copy.Replace(old, plain[0]);
      }
    }
  }
  return copy.Finish();
}

double LayoutAwareCost::NodeCost(const Graph& graph, NodeId n) {
  const Node& node = graph.node(n);
  const std::vector<InputInfo> in = graph.InputInfos(node);
  const std::vector<OutputType> out = graph.OutputTypes(node);
  const double plain = cost_.Cost(*node.op, node.params, in, out);
  const cpu::Kernel* k = cpu::FindKernel(node.op->name());
  if (!k || !cpu::CanRunBlocked(*k, node.params, in, out)) return plain;
  bool measured = false;
  const double blocked = cost_.Cost(*node.op, WithLayout(node.params, true), in, out, &measured);
  return measured ? std::min(plain, blocked) : plain;
}

}  // namespace taso
