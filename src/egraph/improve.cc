// ImproveExtraction: local moves on an extraction, each priced by the DAG cost of the
// whole choice (a shared e-node counted once).
#include <chrono>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "taso/egraph/extract.h"

namespace taso::egraph {

namespace {

using Clock = std::chrono::steady_clock;

class Improver {
 public:
  Improver(const EGraph& eg, const std::vector<double>& prices, const std::vector<ClassId>& roots)
      : eg_(eg), prices_(prices), roots_(roots) {
    for (ClassId c : roots) is_root_.insert(eg.Find(c));
  }

  std::vector<ClassId> UsedClasses(const std::vector<ENodeId>& choice) {
    std::vector<ClassId> order;
    used_.clear();
    Walk(choice, [&](ClassId c) { order.push_back(c); });
    for (ClassId c : order) used_.insert(c);
    return order;
  }

  // Tries, for every class used, every other e-node of the class (with the siblings of
  // a multi-output e-node taking the classes of its other outputs that are used too);
  // keeps a move that lowers the DAG cost, until a pass keeps none or time runs out.
  void Run(std::vector<ENodeId>& choice, Clock::time_point deadline) {
    double best = DagCost(choice);
    for (bool improved = true; improved && Clock::now() < deadline;) {
      improved = false;
      for (ClassId c : UsedClasses(choice)) {
        for (ENodeId n : eg_.NodesIn(c)) {
          if (n == choice[c] || !Chosen(choice, n) || (eg_.node(n).is_leaf() && is_root_.contains(c))) continue;
          std::vector<ENodeId> next = Move(choice, n);
          const double cost = DagCost(next);
          if (cost < best * (1 - 1e-9)) {
            best = cost;
            choice.swap(next);
            improved = true;
          }
        }
        if (Clock::now() > deadline) return;
      }
    }
  }

 private:
  // Whether every child class of e-node n has a choice.
  bool Chosen(const std::vector<ENodeId>& choice, ENodeId n) const {
    for (ClassId c : eg_.node(n).children)
      if (c != kNoClass && choice[c] == kNoENode) return false;
    return true;
  }

  std::vector<ENodeId> Move(const std::vector<ENodeId>& choice, ENodeId n) const {
    std::vector<ENodeId> next = choice;
    next[eg_.ClassOf(n)] = n;
    ENode probe = eg_.node(n);
    for (int k = 0; k < probe.num_outputs; ++k) {
      probe.output = k;
      const ENodeId sibling = eg_.Lookup(probe);
      if (sibling != kNoENode && used_.contains(eg_.ClassOf(sibling))) next[eg_.ClassOf(sibling)] = sibling;
    }
    return next;
  }

 public:
  // The sum of the prices of the e-nodes the roots use, an operator of several outputs
  // once; infinite where the choice has a cycle or leaves a class used without a choice.
  double DagCost(const std::vector<ENodeId>& choice) {
    double total = 0;
    absl::flat_hash_set<ENodeId> operators;  // the output-0 e-node of each operator used
    const bool acyclic = Walk(choice, [&](ClassId c) {
      const ENodeId n = choice[c];
      const ENode& node = eg_.node(n);
      ENodeId first = n;
      if (node.output != 0) {
        ENode probe = node;
        probe.output = 0;
        first = eg_.Lookup(probe);
      }
      if (operators.insert(first).second) total += prices_[n] * node.num_outputs;
    });
    return acyclic ? total : std::numeric_limits<double>::infinity();
  }

 private:
  // Visits the classes the roots use through `choice`, children first; false (and stops)
  // on a cycle or a class used without a choice.
  template <typename Visit>
  bool Walk(const std::vector<ENodeId>& choice, Visit visit) {
    state_.assign(eg_.num_class_ids(), 0);  // 0: unseen, 1: on the path, 2: done
    std::vector<std::pair<ClassId, size_t>> stack;
    for (ClassId root : roots_) {
      stack.push_back({eg_.Find(root), 0});
      while (!stack.empty()) {
        auto& [c, next_child] = stack.back();
        if (next_child == 0 && state_[c] != 0) {
          if (state_[c] == 1) return false;
          stack.pop_back();
          continue;
        }
        if (choice[c] == kNoENode) return false;
        state_[c] = 1;
        const std::vector<ClassId>& children = eg_.node(choice[c]).children;
        if (next_child < children.size()) {
          const ClassId child = children[next_child++];
          if (child == kNoClass || state_[child] == 2) continue;
          if (state_[child] == 1) return false;
          stack.push_back({child, 0});
          continue;
        }
        state_[c] = 2;
        visit(c);
        stack.pop_back();
      }
    }
    return true;
  }

  const EGraph& eg_;
  const std::vector<double>& prices_;
  const std::vector<ClassId>& roots_;
  absl::flat_hash_set<ClassId> is_root_;
  absl::flat_hash_set<ClassId> used_;  // the classes the current choice uses
  std::vector<uint8_t> state_;
};

}  // namespace

std::vector<ClassId> TopologicalClasses(const EGraph& egraph, const std::vector<ClassId>& roots,
                                        const std::vector<ENodeId>& choice) {
  const std::vector<double> no_prices;
  return Improver(egraph, no_prices, roots).UsedClasses(choice);
}

double DagCost(const EGraph& egraph, const std::vector<double>& prices, const std::vector<ClassId>& roots,
               const std::vector<ENodeId>& choice) {
  return Improver(egraph, prices, roots).DagCost(choice);
}

void ImproveExtraction(const EGraph& egraph, const std::vector<double>& prices, const std::vector<ClassId>& roots,
                       Extraction& extraction, double time_limit) {
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(time_limit));
  Improver(egraph, prices, roots).Run(extraction.choice, deadline);
  extraction.order = TopologicalClasses(egraph, roots, extraction.choice);
}

}  // namespace taso::egraph
