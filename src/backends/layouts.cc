#include "taso/backends/layouts.h"

#include <array>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "backends/cpu/cpu_kernel.h"
#include "taso/ir/graph_copy.h"
#include "taso/ir/status_macros.h"

// The conversion operator, through its accessors in ops/.
#include "taso/ir/ops/layout_convert.h"

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
        uses_(g),
        can_block_(g.num_nodes(), -1),
        runs_blocked_(g.num_nodes(), -1),
        layout_inputs_(g.num_nodes()),
        node_cost_(g.num_nodes(), {-1, -1}),
        convert_cost_(g.num_values(), {-1, -1}) {}

  const Graph& graph() const { return g_; }
  bool IsWeightOnly(NodeId n) const { return weight_only_.nodes[n]; }
  const UseIndex& uses() const { return uses_; }

  // Whether node n could run blocked: a kernel that takes the layout and shapes that
  // block (RunsBlocked), and a measured blocked cost.
  bool CanBlock(NodeId n) {
    if (can_block_[n] < 0) can_block_[n] = RunsBlocked(n) && MeasuredBlocked(n);
    return can_block_[n];
  }

  // Whether the cpu kernels run node n blocked: a kernel that takes the layout and shapes
  // that block, the node not weight-only. Nothing is measured.
  bool RunsBlocked(NodeId n) {
    if (runs_blocked_[n] < 0) runs_blocked_[n] = FindRunsBlocked(n);
    return runs_blocked_[n];
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
    if (!blocked || !RunsBlocked(n)) return false;
    const std::vector<size_t>& li = layout_inputs_[n];
    return std::find(li.begin(), li.end(), i) != li.end();
  }

  double ConvertCost(ValueId v, bool to_blocked) {
    double& c = convert_cost_[v][to_blocked];
    if (c < 0) {
      InputInfo in;
      in.shape = g_.value(v).shape;
      c = cost_.Cost(ops::LayoutConvertOp(), ops::LayoutConvertParams(to_blocked), {in},
                     {OutputType{DataType::kFloat32, in.shape}});
    }
    return c;
  }

  // Whether some reader of v could read it blocked (so a blocked producer need not
  // convert it back at once).
  bool ReaderCouldBlock(ValueId v) {
    if (uses_.is_graph_output(v)) return false;
    for (NodeId c : uses_.readers(v))
      if (CanBlock(c)) return true;
    return false;
  }

 private:
  bool FindRunsBlocked(NodeId n) {
    const Node& node = g_.node(n);
    const cpu::Kernel* k = cpu::FindKernel(node.op->name());
    if (!k || weight_only_.nodes[n]) return false;
    const std::vector<InputInfo> in = g_.InputInfos(node);
    if (!cpu::CanRunBlocked(*k, node.params, in, g_.OutputTypes(node))) return false;
    layout_inputs_[n] = k->LayoutInputs(WithLayout(node.params, true), in);
    return true;
  }

  // Whether node n's blocked kernel ran when its cost was measured (its cost kept).
  bool MeasuredBlocked(NodeId n) {
    const Node& node = g_.node(n);
    bool measured = false;
    node_cost_[n][1] =
        cost_.Cost(*node.op, WithLayout(node.params, true), g_.InputInfos(node), g_.OutputTypes(node), &measured);
    return measured;
  }

  const Graph& g_;
  CpuCost& cost_;
  taso::WeightOnly weight_only_;
  UseIndex uses_;
  std::vector<int8_t> can_block_, runs_blocked_;
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

// Writes the graph as a plan lays it out (CpuLayouts::Apply): each node in its layout,
// each value converted once for each other layout it is read in, and a blocked graph
// output converted back to plain under its own name.
class PlanWriter {
 public:
  PlanWriter(LayoutContext& ctx, const CpuLayouts::Plan& plan)
      : g_(ctx.graph()), ctx_(ctx), plan_(plan), copy_(g_), as_made_(g_.num_values(), kNoValue) {}

  absl::StatusOr<Graph> Run(const std::vector<NodeId>& order) {
    RETURN_IF_ERROR(copy_.CopyInputs());
    for (NodeId n : order) RETURN_IF_ERROR(AddNode(n));
    return copy_.Finish();
  }

 private:
  bool IsBlockedOutput(ValueId v) const { return WritesBlocked(g_, plan_, v) && ctx_.uses().is_graph_output(v); }

  absl::Status AddNode(NodeId n) {
    const Node& node = g_.node(n);
    const bool blocked = plan_.blocked[n];
    std::vector<ValueId> inputs;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.inputs[i] == kNoValue) {
        inputs.push_back(kNoValue);
        continue;
      }
      ASSIGN_OR_RETURN(ValueId v, Use(node.inputs[i], !ctx_.IsWeightOnly(n) && ctx_.ReadsBlocked(n, blocked, i)));
      inputs.push_back(v);
    }
    std::vector<std::string> names;
    for (ValueId v : node.outputs)
      names.push_back(IsBlockedOutput(v) ? absl::StrCat(g_.value(v).name, "_blocked") : g_.value(v).name);
    ASSIGN_OR_RETURN(std::vector<ValueId> outs,
                     copy_.AddNodeLike(n, WithLayout(node.params, blocked), std::move(inputs), std::move(names)));
    for (size_t k = 0; k < outs.size(); ++k) RETURN_IF_ERROR(Record(node.outputs[k], outs[k]));
    return absl::OkStatus();
  }

  // Old value `v` as a reader wants it: as made, or converted (once per layout).
  absl::StatusOr<ValueId> Use(ValueId v, bool want_blocked) {
    if (as_made_[v] == kNoValue) {
      ASSIGN_OR_RETURN(as_made_[v], copy_.Use(v));
    }
    if (!IsFloat(g_, v) || want_blocked == WritesBlocked(g_, plan_, v)) return as_made_[v];
    auto it = conversions_.find({v, want_blocked});
    if (it != conversions_.end()) return it->second;
    ASSIGN_OR_RETURN(
        std::vector<ValueId> out,
        copy_.graph().AddNode(&ops::LayoutConvertOp(), ops::LayoutConvertParams(want_blocked), {as_made_[v]}));
    conversions_[{v, want_blocked}] = out[0];
    return out[0];
  }

  // Old value `old` is made as `now`, in its producer's layout.
  absl::Status Record(ValueId old, ValueId now) {
    as_made_[old] = now;
    copy_.Replace(old, now);
    if (!IsBlockedOutput(old)) return absl::OkStatus();
    ASSIGN_OR_RETURN(std::vector<ValueId> plain,
                     copy_.graph().AddNode(&ops::LayoutConvertOp(), ops::LayoutConvertParams(false), {now}, "",
                                           {g_.value(old).name}));
    conversions_[{old, false}] = plain[0];
    copy_.Replace(old, plain[0]);
    return absl::OkStatus();
  }

  const Graph& g_;
  LayoutContext& ctx_;
  const CpuLayouts::Plan& plan_;
  GraphCopy copy_;
  std::vector<ValueId> as_made_;                                        // per old value
  absl::flat_hash_map<std::pair<ValueId, bool>, ValueId> conversions_;  // (old value, to blocked)
};

}  // namespace

CpuLayouts::Plan CpuLayouts::AllPlain(const Graph& graph) {
  Plan plan;
  plan.blocked.assign(graph.num_nodes(), false);
  LayoutContext ctx(graph, cost_);
  Evaluate(ctx, plan);
  return plan;
}

CpuLayouts::Plan CpuLayouts::AllBlocked(const Graph& graph) {
  Plan plan;
  plan.blocked.assign(graph.num_nodes(), false);
  LayoutContext ctx(graph, cost_);
  for (NodeId n = 0; n < graph.num_nodes(); ++n) plan.blocked[n] = ctx.RunsBlocked(n);
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
    bool read_other = own && ctx.uses().is_graph_output(v);
    for (NodeId c : ctx.uses().readers(v)) {
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
  return PlanWriter(ctx, plan).Run(order);
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
