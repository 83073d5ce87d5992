#include "taso/passes/row_form.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "taso/ir/graph_copy.h"
#include "taso/ir/ops/gemm.h"
#include "taso/ir/ops/matmul.h"
#include "taso/ir/ops/reshape.h"
#include "taso/ir/status_macros.h"

namespace taso {
namespace {

// The suffix of a flattened value's name.
constexpr absl::string_view kRowsSuffix = "_rows";

Shape Leading(const Shape& s) { return Shape(s.begin(), s.end() - 1); }

Shape WithLast(Shape leading, int64_t last) {
  leading.push_back(last);
  return leading;
}

// A value that can be a row tensor at a rank above 2: a float activation of known,
// non-empty shape (a constant is never a row: it is a weight the node reads as it is).
bool IsRowCandidate(const Graph& g, ValueId v) {
  if (v == kNoValue) return false;
  const Value& value = g.value(v);
  return value.dtype == DataType::kFloat32 && value.shape_known && value.shape.size() >= 3 &&
         g.ConstantData(v) == nullptr && NumElements(value.shape) > 0;
}

// The parameters of `node` when its row inputs (`rows`), now [from..., f], become
// [to..., f]: the operator proposes them (OpRuleForm::AtRowRank), and shape inference at
// the new rank must give every output the rows `to` and its own last dimension.
std::optional<Params> RowwiseParams(const Graph& g, const Node& node, const std::vector<bool>& rows, const Shape& from,
                                    const Shape& to) {
  if (node.op->is_opaque()) return std::nullopt;
  std::vector<InputInfo> infos = g.InputInfos(node);
  for (size_t i = 0; i < infos.size(); ++i) {
    if (!rows[i]) continue;
    if (!infos[i].shape_known || Leading(infos[i].shape) != from) return std::nullopt;
    infos[i].shape = WithLast(to, infos[i].shape.back());
  }
  for (ValueId out : node.outputs) {
    const Value& v = g.value(out);
    if (!v.shape_known || v.shape.size() != from.size() + 1 || Leading(v.shape) != from) return std::nullopt;
  }
  std::optional<Params> params = node.op->AtRowRank(node.params, g.InputInfos(node), rows, to.size() + 1);
  if (!params) return std::nullopt;
  const absl::StatusOr<std::vector<OutputType>> types = node.op->InferTypes(*params, infos);
  if (!types.ok() || types->size() != node.outputs.size()) return std::nullopt;
  for (size_t k = 0; k < types->size(); ++k)
    if ((*types)[k].shape != WithLast(to, g.value(node.outputs[k]).shape.back())) return std::nullopt;
  return params;
}

// Union-find over values: the row tensors one region of row-wise nodes connects.
class Regions {
 public:
  explicit Regions(int n) : parent_(n) {
    for (int i = 0; i < n; ++i) parent_[i] = i;
  }
  int Find(int v) { return parent_[v] == v ? v : parent_[v] = Find(parent_[v]); }
  void Join(int a, int b) { parent_[Find(a)] = Find(b); }

 private:
  std::vector<int> parent_;
};

// Which nodes a flattening computes on [rows, f], and with which parameters.
struct FlatPlan {
  std::vector<std::optional<Params>> params;                 // per node; set: flattened
  std::vector<bool> row;                                     // per value: a flattened row tensor
  std::vector<std::optional<ops::ProductWithBias>> gemm_at;  // per bias Add: its Gemm
  std::vector<bool> into_gemm;                               // per product node: part of a Gemm
};

std::vector<bool> RowMask(const Node& node, absl::FunctionRef<bool(ValueId)> is_row) {
  std::vector<bool> rows;
  for (ValueId v : node.inputs) rows.push_back(v != kNoValue && is_row(v));
  return rows;
}

FlatPlan PlanFlattening(const Graph& g) {
  FlatPlan plan{std::vector<std::optional<Params>>(g.num_nodes()), std::vector<bool>(g.num_values()),
                std::vector<std::optional<ops::ProductWithBias>>(g.num_nodes()), std::vector<bool>(g.num_nodes())};
  Regions regions(g.num_values());
  std::vector<std::optional<Params>> accepted(g.num_nodes());
  std::vector<bool> seeded(g.num_values());
  for (NodeId n = 0; n < g.num_nodes(); ++n) {
    const Node& node = g.node(n);
    const std::vector<bool> rows = RowMask(node, [&](ValueId v) { return IsRowCandidate(g, v); });
    int first = -1;
    for (size_t i = 0; i < rows.size() && first < 0; ++i)
      if (rows[i]) first = static_cast<int>(i);
    if (first < 0) continue;
    const Shape from = Leading(g.value(node.inputs[first]).shape);
    accepted[n] = RowwiseParams(g, node, rows, from, Shape{NumElements(from)});
    if (!accepted[n]) continue;
    for (size_t i = 0; i < rows.size(); ++i)
      if (rows[i]) regions.Join(node.inputs[i], node.inputs[first]);
    for (ValueId out : node.outputs) regions.Join(out, node.inputs[first]);
    if (node.op == &ops::MatMulOp()) seeded[node.inputs[first]] = true;
  }
  std::vector<bool> region_seeded(g.num_values());
  for (ValueId v = 0; v < g.num_values(); ++v)
    if (seeded[v]) region_seeded[regions.Find(v)] = true;
  for (NodeId n = 0; n < g.num_nodes(); ++n) {
    if (!accepted[n] || !region_seeded[regions.Find(g.node(n).outputs[0])]) continue;
    plan.params[n] = std::move(accepted[n]);
    for (ValueId v : g.node(n).inputs)
      if (v != kNoValue && IsRowCandidate(g, v)) plan.row[v] = true;
    for (ValueId v : g.node(n).outputs) plan.row[v] = true;
  }
  const UseIndex uses(g);
  for (NodeId n = 0; n < g.num_nodes(); ++n) {
    if (!plan.params[n]) continue;
    std::optional<ops::ProductWithBias> linear = ops::MatchProductWithBias(g, uses, n);
    if (!linear || !plan.params[linear->product]) continue;
    plan.into_gemm[linear->product] = true;
    plan.gemm_at[n] = std::move(linear);
  }
  return plan;
}

// Copies a graph, computing the planned nodes on [rows, f].
class Flattener {
 public:
  Flattener(const Graph& g, FlatPlan plan) : g_(g), uses_(g), plan_(std::move(plan)), copy_(g) {}

  absl::StatusOr<Graph> Run() {
    ASSIGN_OR_RETURN(const std::vector<NodeId> order, g_.TopologicalOrder());
    RETURN_IF_ERROR(copy_.CopyInputs());
    for (NodeId n : order) {
      if (plan_.into_gemm[n]) continue;  // made with its bias, as one Gemm
      if (plan_.gemm_at[n]) {
        RETURN_IF_ERROR(AddGemm(n, *plan_.gemm_at[n]));
      } else if (plan_.params[n]) {
        RETURN_IF_ERROR(AddFlattened(n));
      } else {
        RETURN_IF_ERROR(copy_.CopyNode(n));
      }
    }
    return copy_.Finish();
  }

 private:
  // Row tensor `v` on [rows, f]: the flattened node's output, or a Reshape where `v`
  // enters the region.
  absl::StatusOr<ValueId> Flat(ValueId v) {
    if (auto it = flat_.find(v); it != flat_.end()) return it->second;
    ASSIGN_OR_RETURN(const ValueId x, copy_.Use(v));
    const Value& value = g_.value(v);
    ASSIGN_OR_RETURN(const ValueId flat,
                     AddReshape(x, {-1, value.shape.back()}, absl::StrCat(value.name, kRowsSuffix)));
    flat_[v] = flat;
    return flat;
  }

  absl::StatusOr<ValueId> AddReshape(ValueId x, std::vector<int64_t> target, const std::string& out_name) {
    const int64_t rank = static_cast<int64_t>(target.size());
    ASSIGN_OR_RETURN(const ValueId shape,
                     copy_.graph().AddWeight(copy_.FreshName(out_name + "_shape", NameStyle::kBaseThenNumbered),
                                             TensorData::Int64(Shape{rank}, std::move(target))));
    ASSIGN_OR_RETURN(const std::vector<ValueId> out,
                     copy_.graph().AddNode(&ops::ReshapeOp(), Params(), {x, shape}, "", {out_name}));
    return out[0];
  }

  std::string RowsName(ValueId v) {
    return copy_.FreshName(absl::StrCat(g_.value(v).name, kRowsSuffix), NameStyle::kBaseThenNumbered);
  }

  absl::Status AddFlattened(NodeId n) {
    const Node& node = g_.node(n);
    std::vector<ValueId> inputs;
    for (ValueId v : node.inputs) {
      ASSIGN_OR_RETURN(const ValueId in, v != kNoValue && plan_.row[v] ? Flat(v) : copy_.Use(v));
      inputs.push_back(in);
    }
    std::vector<std::string> names;
    for (ValueId v : node.outputs) names.push_back(RowsName(v));
    ASSIGN_OR_RETURN(const std::vector<ValueId> outs,
                     copy_.graph().AddNode(node.op, *plan_.params[n], std::move(inputs), node.name, std::move(names)));
    for (size_t k = 0; k < outs.size(); ++k) RETURN_IF_ERROR(Produced(node.outputs[k], outs[k]));
    return absl::OkStatus();
  }

  absl::Status AddGemm(NodeId add, const ops::ProductWithBias& linear) {
    ASSIGN_OR_RETURN(const ValueId x, Flat(linear.x));
    ASSIGN_OR_RETURN(const ValueId w, copy_.Use(linear.weights));
    ASSIGN_OR_RETURN(const ValueId b, copy_.Use(linear.bias));
    const ValueId y = g_.node(add).outputs[0];
    ASSIGN_OR_RETURN(const std::vector<ValueId> outs,
                     copy_.graph().AddNode(&ops::GemmOp(), ops::ProductWithBiasGemmParams(), {x, w, b},
                                           g_.node(linear.product).name, {RowsName(y)}));
    return Produced(y, outs[0]);
  }

  // Old row tensor `v` is `flat` now; where something outside the region reads it, or it
  // is a graph output, it leaves the region through a Reshape under its own name. The
  // first dimension is written -1, so a symbolic batch stays symbolic.
  absl::Status Produced(ValueId v, ValueId flat) {
    flat_[v] = flat;
    bool leaves = uses_.is_graph_output(v);
    for (NodeId r : uses_.readers(v)) leaves = leaves || !plan_.params[r];
    if (!leaves) return absl::OkStatus();
    std::vector<int64_t> target(g_.value(v).shape.begin(), g_.value(v).shape.end());
    target[0] = -1;
    ASSIGN_OR_RETURN(const ValueId out, AddReshape(flat, std::move(target), g_.value(v).name));
    copy_.Replace(v, out);
    return absl::OkStatus();
  }

  const Graph& g_;
  const UseIndex uses_;
  const FlatPlan plan_;
  GraphCopy copy_;
  absl::flat_hash_map<ValueId, ValueId> flat_;  // old row tensor -> its [rows, f] value
};

// Which nodes get their rank back, at which leading dimensions, with which parameters.
struct LiftPlan {
  std::vector<std::optional<Shape>> leading;  // per 2-D value: the rows' leading dimensions
  std::vector<std::optional<Params>> params;  // per node: its parameters at the higher rank
  std::vector<bool> entry;                    // per node: a Reshape flattening rows
  std::vector<bool> gemm;                     // per node: a Gemm written as MatMul and Add
};

bool IsReshape(const Node& node) { return node.op == &ops::ReshapeOp(); }

// A Reshape of a row tensor to [rows, f] that FlattenRowRegions made (by its output's
// name): one the user wrote stays as written.
bool IsFlattening(const Graph& g, const Node& node) {
  if (!IsReshape(node) || !IsRowCandidate(g, node.inputs[0])) return false;
  if (!absl::StrContains(g.value(node.outputs[0]).name, kRowsSuffix)) return false;
  const Shape& in = g.value(node.inputs[0]).shape;
  return g.value(node.outputs[0]).shape == Shape{NumElements(Leading(in)), in.back()};
}

// The leading dimensions all row inputs of `node` share, when they share one.
std::optional<Shape> SharedLeading(const Node& node, const std::vector<std::optional<Shape>>& leading,
                                   std::vector<bool>& rows) {
  std::optional<Shape> shared;
  for (ValueId v : node.inputs) {
    rows.push_back(v != kNoValue && leading[v].has_value());
    if (!rows.back()) continue;
    if (shared && *shared != *leading[v]) return std::nullopt;
    shared = leading[v];
  }
  return shared;
}

// Forward: rows flattened by a Reshape keep their leading dimensions through every node
// that can take them at the higher rank.
void PlanLifts(const Graph& g, const std::vector<NodeId>& order, LiftPlan& plan) {
  for (NodeId n : order) {
    const Node& node = g.node(n);
    if (IsFlattening(g, node)) {
      plan.entry[n] = true;
      plan.leading[node.outputs[0]] = Leading(g.value(node.inputs[0]).shape);
      continue;
    }
    std::vector<bool> rows;
    const std::optional<Shape> leading = SharedLeading(node, plan.leading, rows);
    if (!leading || node.outputs.empty() || !g.value(node.outputs[0]).shape_known) continue;
    if (node.op == &ops::GemmOp()) {
      if (!rows[0] || rows.size() < 2 || rows[1] || (rows.size() == 3 && rows[2])) continue;
      if (!ops::GemmIsProductWithBias(node.params, g.InputInfos(node))) continue;
      plan.gemm[n] = true;
      plan.params[n] = node.params;
    } else {
      const Shape rows_now{g.value(node.outputs[0]).shape[0]};
      plan.params[n] = RowwiseParams(g, node, rows, rows_now, *leading);
      if (!plan.params[n]) continue;
    }
    for (ValueId out : node.outputs) plan.leading[out] = leading;
  }
}

// Backward: a node gets its rank back only where its rows reach a Reshape (directly or
// through nodes that get theirs back), so a region that ends in 2-D stays as written.
void PruneLifts(const Graph& g, const std::vector<NodeId>& order, LiftPlan& plan) {
  const UseIndex uses(g);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Node& node = g.node(*it);
    if (!plan.params[*it]) continue;
    bool reaches = false;
    for (ValueId out : node.outputs)
      for (NodeId r : uses.readers(out)) reaches = reaches || IsReshape(g.node(r)) || plan.params[r].has_value();
    if (reaches) continue;
    plan.params[*it].reset();
    plan.gemm[*it] = false;
    for (ValueId out : node.outputs) plan.leading[out].reset();
  }
}

LiftPlan PlanRestoring(const Graph& g, const std::vector<NodeId>& order) {
  LiftPlan plan{std::vector<std::optional<Shape>>(g.num_values()), std::vector<std::optional<Params>>(g.num_nodes()),
                std::vector<bool>(g.num_nodes()), std::vector<bool>(g.num_nodes())};
  PlanLifts(g, order, plan);
  PruneLifts(g, order, plan);
  return plan;
}

// Copies a graph, giving the planned nodes their rank back.
class Restorer {
 public:
  Restorer(const Graph& g, LiftPlan plan) : g_(g), uses_(g), plan_(std::move(plan)), copy_(g) {}

  absl::StatusOr<Graph> Run(const std::vector<NodeId>& order) {
    RETURN_IF_ERROR(copy_.CopyInputs());
    for (NodeId n : order) {
      const Node& node = g_.node(n);
      if (plan_.entry[n]) {
        ASSIGN_OR_RETURN(lifted_[node.outputs[0]], copy_.Use(node.inputs[0]));
      } else if (plan_.params[n]) {
        RETURN_IF_ERROR(AddLifted(n));
      } else if (IsReshape(node) && lifted_.contains(node.inputs[0])) {
        RETURN_IF_ERROR(AddReshapeOfLifted(n));
      } else {
        for (ValueId v : node.inputs) RETURN_IF_ERROR(Materialize(v));
        RETURN_IF_ERROR(copy_.CopyNode(n));
      }
    }
    for (ValueId v : g_.outputs()) RETURN_IF_ERROR(Materialize(v));
    return copy_.Finish();
  }

 private:
  Shape LiftedShape(ValueId v) const { return WithLast(*plan_.leading[v], g_.value(v).shape.back()); }

  // A reader of `v` that reshapes it to its lifted shape: the lifted value takes that
  // Reshape's name (the value's name before flattening), the graph output first.
  NodeId CancellingReader(ValueId v) const {
    NodeId found = kNoNode;
    for (NodeId r : uses_.readers(v)) {
      const Node& reader = g_.node(r);
      if (!IsReshape(reader) || reader.inputs[0] != v || g_.value(reader.outputs[0]).shape != LiftedShape(v)) continue;
      if (found == kNoNode || uses_.is_graph_output(reader.outputs[0])) found = r;
    }
    return found;
  }

  std::string LiftedName(ValueId v) {
    const NodeId r = uses_.is_graph_output(v) ? kNoNode : CancellingReader(v);
    if (r == kNoNode) {  // the name it had before flattening, where that is free
      const std::string& name = g_.value(v).name;
      const absl::string_view base = absl::EndsWith(name, kRowsSuffix)
                                         ? absl::string_view(name).substr(0, name.size() - kRowsSuffix.size())
                                         : absl::string_view(name);
      return copy_.FreshName(base, NameStyle::kBaseThenNumbered);
    }
    named_by_.insert({r, true});
    return g_.value(g_.node(r).outputs[0]).name;
  }

  absl::Status AddLifted(NodeId n) {
    const Node& node = g_.node(n);
    std::vector<ValueId> inputs;
    for (ValueId v : node.inputs) {
      if (auto it = lifted_.find(v); it != lifted_.end()) {
        inputs.push_back(it->second);
        continue;
      }
      ASSIGN_OR_RETURN(const ValueId in, copy_.Use(v));
      inputs.push_back(in);
    }
    std::vector<std::string> names;
    for (ValueId v : node.outputs) names.push_back(LiftedName(v));
    std::vector<ValueId> outs;
    if (plan_.gemm[n]) {
      auto fresh = [this](absl::string_view base) { return copy_.FreshName(base, NameStyle::kNumbered); };
      ASSIGN_OR_RETURN(const ValueId y,
                       ops::AddGemmAsProduct(copy_.graph(), node.params, inputs, node.name, names[0], fresh));
      outs.push_back(y);
    } else {
      ASSIGN_OR_RETURN(
          outs, copy_.graph().AddNode(node.op, *plan_.params[n], std::move(inputs), node.name, std::move(names)));
    }
    for (size_t k = 0; k < outs.size(); ++k) lifted_[node.outputs[k]] = outs[k];
    return absl::OkStatus();
  }

  // A Reshape of lifted rows reads them at their rank (both are row-major); one to their
  // own shape is no Reshape, unless it must keep a graph output's name.
  absl::Status AddReshapeOfLifted(NodeId n) {
    const Node& node = g_.node(n);
    const ValueId x = lifted_.at(node.inputs[0]), out = node.outputs[0];
    const bool same = g_.value(out).shape == copy_.graph().value(x).shape;
    if (same && (named_by_.contains(n) || !uses_.is_graph_output(out))) {
      copy_.Replace(out, x);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(const ValueId target, copy_.Use(node.inputs[1]));
    ASSIGN_OR_RETURN(const std::vector<ValueId> outs,
                     copy_.AddNodeLike(n, node.params, {x, target}, {g_.value(out).name}));
    copy_.Replace(out, outs[0]);
    return absl::OkStatus();
  }

  // Lifted rows that something reads flattened are flattened again, under their name.
  absl::Status Materialize(ValueId v) {
    if (v == kNoValue || copy_.Made(v)) return absl::OkStatus();
    const auto it = lifted_.find(v);
    if (it == lifted_.end()) return absl::OkStatus();
    const Value& value = g_.value(v);
    const int64_t f = value.shape.back();
    ASSIGN_OR_RETURN(const ValueId shape,
                     copy_.graph().AddWeight(copy_.FreshName(value.name + "_shape", NameStyle::kBaseThenNumbered),
                                             TensorData::Int64(Shape{2}, {-1, f})));
    ASSIGN_OR_RETURN(const std::vector<ValueId> out,
                     copy_.graph().AddNode(&ops::ReshapeOp(), Params(), {it->second, shape}, "", {value.name}));
    copy_.Replace(v, out[0]);
    return absl::OkStatus();
  }

  const Graph& g_;
  const UseIndex uses_;
  const LiftPlan plan_;
  GraphCopy copy_;
  absl::flat_hash_map<ValueId, ValueId> lifted_;  // old [rows, f] value -> its value at its rank
  absl::flat_hash_map<NodeId, bool> named_by_;    // cancelling Reshapes whose name a lifted value took
};

}  // namespace

absl::StatusOr<Graph> FlattenRowRegions(const Graph& graph) {
  FlatPlan plan = PlanFlattening(graph);
  bool any = false;
  for (const std::optional<Params>& p : plan.params) any = any || p.has_value();
  if (!any) return graph;
  return Flattener(graph, std::move(plan)).Run();
}

absl::StatusOr<Graph> RestoreRowRank(const Graph& graph) {
  ASSIGN_OR_RETURN(const std::vector<NodeId> order, graph.TopologicalOrder());
  LiftPlan plan = PlanRestoring(graph, order);
  bool any = false;
  for (const std::optional<Params>& p : plan.params) any = any || p.has_value();
  if (!any) return graph;
  return Restorer(graph, std::move(plan)).Run(order);
}

}  // namespace taso
