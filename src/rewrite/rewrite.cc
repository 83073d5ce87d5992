// ApplyMatch: rebuilds the graph with a match's nodes left out and the rule's target put
// in their place, in a dependency order found afresh (the target may read tensors that
// the source's first node came before).
#include <set>

#include "absl/strings/str_cat.h"
#include "taso/ir/graph_copy.h"
#include "taso/ir/status_macros.h"
#include "taso/rewrite/match.h"

namespace taso {
namespace {

class Rewriter {
 public:
  Rewriter(const Graph& old, const RuleMatcher& rule, const Match& match)
      : old_(old), rule_(rule.rule()), match_(match), copy_(old) {}

  absl::StatusOr<Graph> Run() {
    RETURN_IF_ERROR(copy_.CopyInputs());
    ASSIGN_OR_RETURN(std::vector<NodeId> order, old_.TopologicalOrder());
    std::set<NodeId> replaced(match_.nodes.begin(), match_.nodes.end());
    std::vector<NodeId> pending;
    for (NodeId n : order)
      if (!replaced.count(n)) pending.push_back(n);
    bool target_done = false;
    for (bool progress = true; progress;) {
      progress = false;
      if (!target_done && copy_.Available(TargetInputs())) {
        RETURN_IF_ERROR(EmitTarget());
        target_done = progress = true;
      }
      std::vector<NodeId> still;
      for (NodeId n : pending) {
        if (copy_.Available(old_.node(n).inputs)) {
          RETURN_IF_ERROR(copy_.CopyNode(n));
          progress = true;
        } else {
          still.push_back(n);
        }
      }
      pending.swap(still);
    }
    if (!target_done || !pending.empty())
      return absl::FailedPreconditionError(absl::StrCat("applying rule ", rule_.name, " here would make a cycle"));
    return copy_.Finish();
  }

 private:
  std::vector<ValueId> TargetInputs() const {
    return std::vector<ValueId>(match_.tensors.begin(), match_.tensors.begin() + rule_.inputs.size());
  }

  // A fresh name made from `hint` and the rule's name.
  std::string FreshName(absl::string_view hint) {
    return copy_.FreshName(absl::StrCat(hint, "_", rule_.name), NameStyle::kNumbered);
  }

  absl::Status EmitTarget() {
    const RuleGraph& target = rule_.target;
    Graph& out = copy_.graph();
    // Which old value each target tensor replaces.
    std::vector<ValueId> replaces(rule_.inputs.size(), kNoValue);
    for (const RuleOp& op : target.ops) replaces.resize(replaces.size() + op.num_outputs, kNoValue);
    for (size_t k = 0; k < target.outputs.size(); ++k)
      replaces[target.outputs[k]] = match_.tensors[rule_.source.outputs[k]];

    std::vector<ValueId> tensors;  // target tensor -> new value
    for (ValueId v : TargetInputs()) {
      ASSIGN_OR_RETURN(ValueId id, copy_.Use(v));
      tensors.push_back(id);
    }
    const std::string hint = old_.value(match_.tensors[rule_.source.outputs[0]]).name;
    for (const RuleOp& op : target.ops) {
      ASSIGN_OR_RETURN(Params params,
                       ResolvedParams(rule_, op, [&](int t) -> const Shape& { return out.value(tensors[t]).shape; }));
      std::vector<ValueId> inputs;
      for (int t : op.inputs) inputs.push_back(tensors[t]);
      std::vector<std::string> names;
      for (int k = 0; k < op.num_outputs; ++k) {
        const ValueId old = replaces[tensors.size() + k];
        names.push_back(old != kNoValue && !copy_.Made(old) ? old_.value(old).name : FreshName(hint));
      }
      ASSIGN_OR_RETURN(std::vector<ValueId> outs, out.AddNode(op.op, std::move(params), std::move(inputs),
                                                              FreshName(op.op->name()), std::move(names)));
      tensors.insert(tensors.end(), outs.begin(), outs.end());
    }
    for (size_t k = 0; k < target.outputs.size(); ++k) {
      const ValueId old = match_.tensors[rule_.source.outputs[k]];
      const ValueId now = tensors[target.outputs[k]];
      const bool graph_output = std::find(old_.outputs().begin(), old_.outputs().end(), old) != old_.outputs().end();
      if (graph_output && target.outputs[k] < static_cast<int>(rule_.inputs.size()))
        return absl::FailedPreconditionError(
            absl::StrCat("rule ", rule_.name, " would rename the graph output ", old_.value(old).name));
      if (old_.value(old).shape != out.value(now).shape)
        return absl::FailedPreconditionError(
            absl::StrCat("rule ", rule_.name, " would change the shape of ", old_.value(old).name));
      if (copy_.Made(old))  // a source output that is also a rule input: the same value
        return absl::FailedPreconditionError(absl::StrCat("rule ", rule_.name, " maps an output to an input"));
      copy_.Replace(old, now);
    }
    return absl::OkStatus();
  }

  const Graph& old_;
  const Rule& rule_;
  const Match& match_;
  GraphCopy copy_;
};

}  // namespace

absl::StatusOr<Graph> ApplyMatch(const Graph& graph, const RuleMatcher& rule, const Match& match) {
  return Rewriter(graph, rule, match).Run();
}

}  // namespace taso
