// ExtractGreedyDag: greedy extraction by DAG costs (each class's cost is that of the set
// of operators its choice uses, a shared one counted once).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "taso/egraph/extract.h"

namespace taso::egraph {

namespace {

using Clock = std::chrono::steady_clock;

// The e-nodes a class's choice uses below it: per class, the e-node chosen, sorted by
// class id (leaves left out: they cost nothing and close no cycle).
using Used = std::vector<std::pair<ClassId, ENodeId>>;

class DagGreedy {
 public:
  DagGreedy(const EGraph& eg, const std::vector<double>& prices, const std::vector<ClassId>& roots)
      : eg_(eg),
        prices_(prices),
        cost_(eg.num_class_ids(), kInfinity),
        used_(eg.num_class_ids()),
        choice_(eg.num_class_ids(), kNoENode),
        must_compute_(eg.num_class_ids(), false) {
    for (ClassId c : roots) must_compute_[eg.Find(c)] = true;
  }

  // Runs to a fixed point or the deadline; false at the deadline.
  bool Run(Clock::time_point deadline) {
    std::deque<ENodeId> todo;
    std::vector<bool> queued(eg_.num_node_ids(), false);
    for (ENodeId n = 0; n < eg_.num_node_ids(); ++n)
      if (eg_.alive(n)) todo.push_back(n), queued[n] = true;
    while (!todo.empty()) {
      if (Clock::now() > deadline) return false;
      const ENodeId n = todo.front();
      todo.pop_front();
      queued[n] = false;
      if (!Offer(n)) continue;
      for (ENodeId p : eg_.Parents(eg_.ClassOf(n)))
        if (eg_.alive(p) && !queued[p]) todo.push_back(p), queued[p] = true;
    }
    return true;
  }

  // The choices as an extraction: each class's own, or where those make a cycle, the
  // roots' used sets merged.
  Extraction Result(const std::vector<ClassId>& roots) const {
    Extraction ex{choice_, {}};
    if (std::isinf(DagCost(eg_, prices_, roots, ex.choice))) {
      ex.choice.assign(eg_.num_class_ids(), kNoENode);
      for (ClassId r : roots)
        for (const auto& [c, n] : used_[eg_.Find(r)])
          if (ex.choice[c] == kNoENode) ex.choice[c] = n;
      for (ClassId c = 0; c < eg_.num_class_ids(); ++c)  // leaves the roots read
        if (ex.choice[c] == kNoENode && choice_[c] != kNoENode && eg_.node(choice_[c]).is_leaf())
          ex.choice[c] = choice_[c];
    }
    ex.order = TopologicalClasses(eg_, roots, ex.choice);
    return ex;
  }

 private:
  static constexpr double kInfinity = std::numeric_limits<double>::infinity();

  // Tries e-node n for its class; true when it became the class's choice.
  bool Offer(ENodeId n) {
    const ENode& node = eg_.node(n);
    const ClassId c = eg_.ClassOf(n);
    if (node.is_leaf()) {
      if (must_compute_[c] || choice_[c] != kNoENode) return false;
      choice_[c] = n;
      cost_[c] = 0;
      return true;
    }
    Used merged;
    for (ClassId child : node.children) {
      if (child == kNoClass) continue;
      child = eg_.Find(child);
      if (choice_[child] == kNoENode) return false;
      merged = Merge(merged, used_[child]);
      if (!eg_.node(choice_[child]).is_leaf()) merged = Merge(merged, Used{{child, choice_[child]}});
    }
    const auto at = std::lower_bound(merged.begin(), merged.end(), std::make_pair(c, ENodeId{-1}));
    if (at != merged.end() && at->first == c) return false;  // a cycle through c
    const double cost = Cost(merged, n);
    if (!(cost < cost_[c] * (1 - 1e-12)) && choice_[c] != kNoENode) return false;
    cost_[c] = cost;
    choice_[c] = n;
    used_[c] = std::move(merged);
    return true;
  }

  // Sorted union by class; a class in both keeps a's e-node.
  static Used Merge(const Used& a, const Used& b) {
    Used out;
    out.reserve(a.size() + b.size());
    size_t i = 0, j = 0;
    while (i < a.size() || j < b.size()) {
      if (j == b.size() || (i < a.size() && a[i].first < b[j].first)) {
        out.push_back(a[i++]);
      } else if (i == a.size() || b[j].first < a[i].first) {
        out.push_back(b[j++]);
      } else {
        out.push_back(a[i++]);
        ++j;
      }
    }
    return out;
  }

  // The prices of the operators `used` and e-node n use, each operator once.
  double Cost(const Used& used, ENodeId n) const {
    absl::flat_hash_set<ENodeId> operators;
    double total = 0;
    auto add = [&](ENodeId e) {
      if (operators.insert(FirstOutput(eg_, e)).second) total += prices_[e] * eg_.node(e).num_outputs;
    };
    for (const auto& entry : used) add(entry.second);
    add(n);
    return total;
  }

  const EGraph& eg_;
  const std::vector<double>& prices_;
  std::vector<double> cost_;  // per class: the DAG cost of its choice
  std::vector<Used> used_;    // per class: what its choice uses below it
  std::vector<ENodeId> choice_;
  std::vector<bool> must_compute_;
};

}  // namespace

std::optional<Extraction> ExtractGreedyDag(const EGraph& egraph, const std::vector<double>& prices,
                                           const std::vector<ClassId>& roots, double time_limit) {
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(time_limit));
  DagGreedy greedy(egraph, prices, roots);
  if (!greedy.Run(deadline)) return std::nullopt;
  Extraction ex = greedy.Result(roots);
  for (ClassId r : roots)
    if (ex.choice[egraph.Find(r)] == kNoENode) return std::nullopt;
  if (std::isinf(DagCost(egraph, prices, roots, ex.choice))) return std::nullopt;
  return ex;
}

}  // namespace taso::egraph
