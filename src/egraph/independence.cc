#include "taso/egraph/independence.h"

#include <vector>

#include "absl/container/flat_hash_set.h"

namespace taso::egraph {

namespace {

// Whether `target` is `from` or below it: reachable through the children of any e-node
// of the classes on the way. Weight-only classes are not entered (nothing they hold
// depends on a run-time tensor).
bool Reaches(const EGraph& eg, ClassId from, ClassId target) {
  from = eg.Find(from);
  target = eg.Find(target);
  absl::flat_hash_set<ClassId> seen = {from};
  std::vector<ClassId> todo = {from};
  while (!todo.empty()) {
    const ClassId c = todo.back();
    todo.pop_back();
    if (c == target) return true;
    if (eg.eclass(c).weight_only) continue;
    for (ENodeId n : eg.NodesIn(c))
      for (ClassId child : eg.node(n).children)
        if (child != kNoClass && seen.insert(eg.Find(child)).second) todo.push_back(eg.Find(child));
  }
  return false;
}

}  // namespace

bool MatchIsIndependent(const EGraph& eg, const Rule& rule, const EMatch& match) {
  const size_t num_inputs = rule.inputs.size();
  for (size_t i = 0; i < num_inputs; ++i) {
    const ClassId input = eg.Find(match.tensors[i]);
    if (eg.eclass(input).weight_only) continue;
    for (int out : rule.source.outputs)
      if (Reaches(eg, input, match.tensors[out])) return false;
    for (size_t j = 0; j < num_inputs; ++j) {
      const ClassId other = eg.Find(match.tensors[j]);
      if (j != i && !eg.eclass(other).weight_only && Reaches(eg, input, other)) return false;
    }
  }
  return true;
}

}  // namespace taso::egraph
