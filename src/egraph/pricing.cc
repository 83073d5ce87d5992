// PriceWithPruning: the analytic model decides which e-nodes are worth measuring.
#include <algorithm>
#include <limits>

#include "absl/container/flat_hash_map.h"

#include "taso/egraph/extract.h"

namespace taso::egraph {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Per class id: the least tree cost of its e-nodes (a shared child counted once per
// reader), by the greedy extraction's choice; infinite where nothing computes it.
std::vector<double> BestTreeCosts(const EGraph& eg, const std::vector<double>& prices, const Extraction& greedy) {
  std::vector<double> best(eg.num_class_ids(), kInfinity);
  for (ClassId c : greedy.order) {
    const ENode& node = eg.node(greedy.choice[c]);
    double total = prices[greedy.choice[c]];
    for (size_t i = 0; i < node.children.size(); ++i) {
      const ClassId child = node.children[i];
      if (child != kNoClass &&
          std::find(node.children.begin(), node.children.begin() + i, child) == node.children.begin() + i)
        total += best[child];
    }
    best[c] = total;
  }
  return best;
}

// Whether e-node n's tree cost exceeds its class's best by at most the price of the
// class's best e-node.
bool NearOptimal(const EGraph& eg, const std::vector<double>& prices, const Extraction& greedy,
                 const std::vector<double>& best, ENodeId n) {
  const ClassId c = eg.ClassOf(n);
  if (greedy.choice[c] == kNoENode) return false;
  double total = prices[n];
  const std::vector<ClassId>& children = eg.node(n).children;
  for (size_t i = 0; i < children.size(); ++i)
    if (children[i] != kNoClass &&
        std::find(children.begin(), children.begin() + i, children[i]) == children.begin() + i)
      total += best[children[i]];
  return total <= best[c] + prices[greedy.choice[c]] * (1 + 1e-9);
}

}  // namespace

std::vector<bool> NearOptimalENodes(const EGraph& eg, const std::vector<double>& prices,
                                    const std::vector<ClassId>& roots) {
  std::vector<bool> marked(eg.num_node_ids(), false), reached(eg.num_class_ids(), false);
  auto greedy = ExtractGreedy(eg, prices, roots);
  if (!greedy.ok()) return marked;
  const std::vector<double> best = BestTreeCosts(eg, prices, *greedy);
  std::vector<ClassId> stack;
  for (ClassId r : roots) stack.push_back(eg.Find(r));
  while (!stack.empty()) {
    const ClassId c = stack.back();
    stack.pop_back();
    if (reached[c]) continue;
    reached[c] = true;
    for (ENodeId n : eg.NodesIn(c)) {
      if (!NearOptimal(eg, prices, *greedy, best, n)) continue;
      marked[n] = true;
      for (ClassId child : eg.node(n).children)
        if (child != kNoClass && !reached[child]) stack.push_back(child);
    }
  }
  return marked;
}

std::vector<double> PriceWithPruning(const EGraph& egraph, CostModel& analytic, CostModel& measured,
                                     const std::vector<ClassId>& roots, PricingStats& stats,
                                     const PricingContext* context) {
  std::vector<double> prices = PriceENodes(egraph, analytic);
  if (!ExtractGreedy(egraph, prices, roots).ok()) return PriceENodes(egraph, measured, nullptr, context);  // extraction fails later
  std::vector<bool> candidates(egraph.num_node_ids(), false);  // marked on operators' first outputs
  const std::vector<bool> near = NearOptimalENodes(egraph, prices, roots);
  for (ENodeId n = 0; n < egraph.num_node_ids(); ++n)
    if (const ENodeId first = FirstOutput(egraph, n); near[n] && first != kNoENode) candidates[first] = true;
  const std::vector<double> measured_prices = PriceENodes(egraph, measured, &candidates, context);
  // Measured over analytic price, per operator and over all: small operators (an Add
  // of a row) cost a runtime far more than their work, so one ratio for all would price
  // an unmeasured elementwise e-node far below its measured peers.
  struct Sums {
    double analytic = 0, measured = 0;
    double Ratio(double otherwise) const { return analytic > 0 && measured > 0 ? measured / analytic : otherwise; }
  };
  Sums all;
  absl::flat_hash_map<const OpDef*, Sums> by_op;
  stats = PricingStats{};
  for (ENodeId n = 0; n < egraph.num_node_ids(); ++n) {
    if (prices[n] <= 0 || egraph.node(n).output != 0) continue;
    ++stats.priced;
    if (!candidates[n]) continue;
    ++stats.measured;
    for (Sums* sums : {&all, &by_op[egraph.node(n).op]}) {
      sums->analytic += prices[n];
      sums->measured += measured_prices[n];
    }
  }
  stats.scale = all.Ratio(1);
  for (ENodeId n = 0; n < egraph.num_node_ids(); ++n) {
    const ENodeId first = FirstOutput(egraph, n);
    if (first != kNoENode && candidates[first]) {
      prices[n] = measured_prices[n];
    } else if (prices[n] > 0) {
      auto it = by_op.find(egraph.node(n).op);
      prices[n] *= it == by_op.end() ? stats.scale : it->second.Ratio(stats.scale);
    }
  }
  return prices;
}

}  // namespace taso::egraph
