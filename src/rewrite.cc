// ApplyMatch: rebuilds the graph with a match's nodes left out and the rule's target put
// in their place, in a dependency order found afresh (the target may read tensors that
// the source's first node came before).
#include <set>

#include "absl/strings/str_cat.h"
#include "taso/match.h"
#include "taso/status_macros.h"

namespace taso {
namespace {

class Rewriter {
 public:
  Rewriter(const Graph& old, const RuleMatcher& rule, const Match& match)
      : old_(old), rule_(rule.rule()), match_(match), remap_(old.num_values(), kNoValue) {}

  absl::StatusOr<Graph> Run() {
    for (ValueId v : old_.inputs()) {
      const Value& value = old_.value(v);
      if (value.is_weight()) {
        ASSIGN_OR_RETURN(ValueId id, Use(v));
        RETURN_IF_ERROR(new_.MarkWeightAsInput(id));
      } else {
        ASSIGN_OR_RETURN(remap_[v], new_.AddInput(value.name, value.dtype, value.shape));
      }
    }
    ASSIGN_OR_RETURN(std::vector<NodeId> order, old_.TopologicalOrder());
    std::set<NodeId> replaced(match_.nodes.begin(), match_.nodes.end());
    std::vector<NodeId> pending;
    for (NodeId n : order)
      if (!replaced.count(n)) pending.push_back(n);
    bool target_done = false;
    for (bool progress = true; progress;) {
      progress = false;
      if (!target_done && Available(TargetInputs())) {
        RETURN_IF_ERROR(EmitTarget());
        target_done = progress = true;
      }
      std::vector<NodeId> still;
      for (NodeId n : pending) {
        if (Available(old_.node(n).inputs)) {
          RETURN_IF_ERROR(EmitCopy(n));
          progress = true;
        } else {
          still.push_back(n);
        }
      }
      pending.swap(still);
    }
    if (!target_done || !pending.empty())
      return absl::FailedPreconditionError(absl::StrCat("applying rule ", rule_.name, " here would make a cycle"));
    for (ValueId v : old_.outputs()) {
      ASSIGN_OR_RETURN(ValueId id, Use(v));
      RETURN_IF_ERROR(new_.AddOutput(id));
    }
    return std::move(new_);
  }

 private:
  std::vector<ValueId> TargetInputs() const {
    return std::vector<ValueId>(match_.tensors.begin(), match_.tensors.begin() + rule_.inputs.size());
  }

  // Weights are added when first read, so those the rewrite leaves unread disappear.
  bool Available(const std::vector<ValueId>& values) const {
    for (ValueId v : values)
      if (v != kNoValue && remap_[v] == kNoValue && !old_.value(v).is_weight()) return false;
    return true;
  }
  absl::StatusOr<ValueId> Use(ValueId v) {
    if (v == kNoValue) return kNoValue;
    if (remap_[v] == kNoValue) {
      const Value& value = old_.value(v);
      if (!value.is_weight()) return absl::InternalError(absl::StrCat("value ", value.name, " used before it is made"));
      ASSIGN_OR_RETURN(remap_[v], new_.AddWeight(value.name, value.data));
    }
    return remap_[v];
  }

  absl::Status EmitCopy(NodeId n) {
    const Node& node = old_.node(n);
    std::vector<ValueId> inputs;
    for (ValueId v : node.inputs) {
      ASSIGN_OR_RETURN(ValueId id, Use(v));
      inputs.push_back(id);
    }
    std::vector<std::string> names;
    for (ValueId v : node.outputs) names.push_back(old_.value(v).name);
    std::vector<ValueId> outs;
    if (node.op->is_opaque()) {
      std::vector<OutputType> types;
      for (ValueId v : node.outputs) {
        const Value& value = old_.value(v);
        types.push_back({value.dtype, value.shape, value.shape_known});
      }
      ASSIGN_OR_RETURN(outs, new_.AddOpaqueNode(node.onnx_node, std::move(inputs), std::move(names), std::move(types)));
    } else {
      ASSIGN_OR_RETURN(outs, new_.AddNode(node.op, node.params, std::move(inputs), node.name, std::move(names)));
    }
    for (size_t k = 0; k < outs.size(); ++k) remap_[node.outputs[k]] = outs[k];
    return absl::OkStatus();
  }

  // A name no value of the old or the new graph has.
  std::string FreshName(const std::string& hint) {
    for (int i = 0;; ++i) {
      std::string name = absl::StrCat(hint, "_", rule_.name, "_", i);
      if (old_.FindValue(name) == kNoValue && new_.FindValue(name) == kNoValue) return name;
    }
  }

  absl::Status EmitTarget() {
    const RuleGraph& target = rule_.target;
    // Which target tensor replaces which old value.
    std::vector<ValueId> replaces(rule_.inputs.size(), kNoValue);
    for (const RuleOp& op : target.ops) replaces.resize(replaces.size() + op.num_outputs, kNoValue);
    for (size_t k = 0; k < target.outputs.size(); ++k) replaces[target.outputs[k]] = match_.tensors[rule_.source.outputs[k]];

    std::vector<ValueId> tensors;  // target tensor -> new value
    for (ValueId v : TargetInputs()) {
      ASSIGN_OR_RETURN(ValueId id, Use(v));
      tensors.push_back(id);
    }
    const std::string hint = old_.value(match_.tensors[rule_.source.outputs[0]]).name;
    for (const RuleOp& op : target.ops) {
      ASSIGN_OR_RETURN(Params params,
                       ResolvedParams(rule_, op, [&](int t) -> const Shape& { return new_.value(tensors[t]).shape; }));
      std::vector<ValueId> inputs;
      for (int t : op.inputs) inputs.push_back(tensors[t]);
      std::vector<std::string> names;
      for (int k = 0; k < op.num_outputs; ++k) {
        const ValueId old = replaces[tensors.size() + k];
        names.push_back(old != kNoValue && remap_[old] == kNoValue ? old_.value(old).name : FreshName(hint));
      }
      ASSIGN_OR_RETURN(std::vector<ValueId> outs,
                       new_.AddNode(op.op, std::move(params), std::move(inputs), FreshName(op.op->name().data()),
                                    std::move(names)));
      tensors.insert(tensors.end(), outs.begin(), outs.end());
    }
    for (size_t k = 0; k < target.outputs.size(); ++k) {
      const ValueId old = match_.tensors[rule_.source.outputs[k]];
      const ValueId now = tensors[target.outputs[k]];
      if (old_.value(old).shape != new_.value(now).shape)
        return absl::FailedPreconditionError(absl::StrCat("rule ", rule_.name, " would change the shape of ",
                                                          old_.value(old).name));
      if (remap_[old] != kNoValue)  // a source output that is also a rule input: the same value
        return absl::FailedPreconditionError(absl::StrCat("rule ", rule_.name, " maps an output to an input"));
      remap_[old] = now;
    }
    return absl::OkStatus();
  }

  const Graph& old_;
  const Rule& rule_;
  const Match& match_;
  Graph new_;
  std::vector<ValueId> remap_;
};

}  // namespace

absl::StatusOr<Graph> ApplyMatch(const Graph& graph, const RuleMatcher& rule, const Match& match) {
  return Rewriter(graph, rule, match).Run();
}

}  // namespace taso
