// ExtractedGraph: the chosen e-nodes written out as a graph, in the order they were chosen.
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "taso/egraph/extract.h"
#include "taso/ir/graph_copy.h"
#include "taso/ir/status_macros.h"

namespace taso::egraph {

namespace {

class Writer {
 public:
  Writer(const Graph& original, const GraphEGraph& built, const Extraction& ex)
      : old_(original),
        eg_(built.egraph),
        built_(built),
        ex_(ex),
        copy_(original),
        made_(eg_.num_class_ids(), kNoValue) {}

  absl::StatusOr<Graph> Run() {
    RETURN_IF_ERROR(copy_.CopyInputs());
    NameOutputs();
    const std::vector<bool> needed = Needed();
    for (ClassId c : ex_.order)
      if (needed[c] && made_[c] == kNoValue) RETURN_IF_ERROR(Emit(c));
    std::vector<bool> seen(eg_.num_class_ids(), false);
    for (ValueId v : old_.outputs()) {
      if (old_.value(v).producer == kNoNode) continue;  // an input or weight: Finish copies it
      const ClassId c = eg_.Find(built_.value_class[v]);
      ValueId now = made_[c];
      if (seen[c]) {  // a second output of one class: its own copy, under its own name
        ASSIGN_OR_RETURN(std::vector<ValueId> outs, EmitNode(ex_.choice[c], old_.value(v).name));
        now = outs[eg_.node(ex_.choice[c]).output];
      }
      seen[c] = true;
      copy_.Replace(v, now);
    }
    return copy_.Finish();
  }

 private:
  // Each output's class is named after the first output in it.
  void NameOutputs() {
    for (ValueId v : old_.outputs()) {
      const ClassId c = eg_.Find(built_.value_class[v]);
      if (old_.value(v).producer != kNoNode) names_.try_emplace(c, old_.value(v).name);
    }
  }

  // The classes the outputs read through the chosen e-nodes.
  std::vector<bool> Needed() const {
    std::vector<bool> needed(eg_.num_class_ids(), false);
    for (ENodeId n : UsedENodes(old_, built_, ex_)) needed[eg_.ClassOf(n)] = true;
    return needed;
  }

  // The name of class c's value: an output's, else that of a computed graph value in it.
  std::string NameOf(ClassId c) {
    if (auto it = names_.find(c); it != names_.end()) return it->second;
    const ValueId origin = eg_.eclass(c).origin;
    if (origin != kNoValue && old_.value(origin).producer != kNoNode && !taken_.contains(origin)) {
      taken_.insert(origin);
      return old_.value(origin).name;
    }
    return copy_.FreshName("egraph", NameStyle::kNumbered);
  }

  absl::Status Emit(ClassId c) {
    const ENodeId n = ex_.choice[c];
    const ENode& node = eg_.node(n);
    if (node.is_leaf()) {
      ASSIGN_OR_RETURN(made_[c], copy_.Use(node.origin));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(std::vector<ValueId> outs, EmitNode(n, ""));
    made_[c] = outs[node.output];
    return absl::OkStatus();
  }

  // Adds e-node n's operator (once for all its outputs): its chosen outputs named after
  // their classes, output `name_for_n` (when not empty) named so.
  absl::StatusOr<std::vector<ValueId>> EmitNode(ENodeId n, const std::string& name_for_n) {
    const ENode& node = eg_.node(n);
    std::vector<ValueId> inputs;
    for (ClassId child : node.children) inputs.push_back(child == kNoClass ? kNoValue : made_[child]);
    std::vector<std::string> names;
    std::vector<ClassId> sibling_class;
    ENode probe = node;
    for (int k = 0; k < node.num_outputs; ++k) {
      probe.output = k;
      const ENodeId sibling = k == node.output ? n : eg_.Lookup(probe);
      const ClassId c = sibling == kNoENode ? kNoClass : eg_.ClassOf(sibling);
      const bool chosen = c != kNoClass && ex_.choice[c] == sibling && made_[c] == kNoValue;
      sibling_class.push_back(chosen ? c : kNoClass);
      if (k == node.output && !name_for_n.empty()) {
        names.push_back(name_for_n);
        sibling_class.back() = kNoClass;
      } else if (node.is_opaque()) {
        names.push_back(old_.value(old_.node(node.origin).outputs[k]).name);
      } else {
        names.push_back(chosen ? NameOf(c) : copy_.FreshName("egraph", NameStyle::kNumbered));
      }
    }
    std::vector<ValueId> outs;
    if (node.is_opaque()) {
      ASSIGN_OR_RETURN(outs, copy_.AddNodeLike(node.origin, Params(), std::move(inputs), std::move(names)));
    } else {
      ASSIGN_OR_RETURN(outs, copy_.graph().AddNode(node.op, node.params, std::move(inputs), "", std::move(names)));
    }
    for (int k = 0; k < node.num_outputs; ++k)
      if (sibling_class[k] != kNoClass) made_[sibling_class[k]] = outs[k];
    return outs;
  }

  const Graph& old_;
  const EGraph& eg_;
  const GraphEGraph& built_;
  const Extraction& ex_;
  GraphCopy copy_;
  std::vector<ValueId> made_;  // per class id: its value in the new graph
  absl::flat_hash_map<ClassId, std::string> names_;
  absl::flat_hash_set<ValueId> taken_;
};

}  // namespace

absl::StatusOr<Graph> ExtractedGraph(const Graph& original, const GraphEGraph& built, const Extraction& extraction) {
  return Writer(original, built, extraction).Run();
}

std::vector<ENodeId> UsedENodes(const Graph& original, const GraphEGraph& built, const Extraction& extraction) {
  const EGraph& eg = built.egraph;
  std::vector<bool> seen(eg.num_class_ids(), false);
  std::vector<ClassId> stack;
  std::vector<ENodeId> used;
  for (ValueId v : original.outputs()) stack.push_back(eg.Find(built.value_class[v]));
  while (!stack.empty()) {
    const ClassId c = stack.back();
    stack.pop_back();
    if (seen[c] || extraction.choice[c] == kNoENode) continue;
    seen[c] = true;
    used.push_back(extraction.choice[c]);
    for (ClassId child : eg.node(extraction.choice[c]).children)
      if (child != kNoClass) stack.push_back(child);
  }
  return used;
}

}  // namespace taso::egraph
