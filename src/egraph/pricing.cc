// PrunedPricing: the analytic model decides which e-nodes are worth measuring first, the
// extractions which others.
#include <algorithm>
#include <cmath>
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
    for (size_t i = 0; i < node.children.size(); ++i)
      if (TreeCostCounts(node, i)) total += best[node.children[i]];
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
    if (TreeCostCounts(eg.node(n), i)) total += best[children[i]];
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

PrunedPricing::PrunedPricing(const EGraph& egraph, CostModel& analytic, CostModel& measured,
                             const std::vector<ClassId>& roots, const PricingContext* context,
                             std::chrono::steady_clock::time_point measure_until)
    : eg_(egraph),
      measured_(measured),
      context_(context),
      measure_until_(measure_until),
      analytic_prices_(PriceENodes(egraph, analytic)),
      measured_prices_(egraph.num_node_ids(), 0),
      candidates_(egraph.num_node_ids(), false) {
  if (!ExtractGreedy(egraph, analytic_prices_, roots).ok()) {  // extraction fails later
    prices_ = PriceENodes(egraph, measured, nullptr, context);
    all_measured_ = true;
    return;
  }
  std::vector<bool> near_candidates(egraph.num_node_ids(), false);  // marked on operators' first outputs
  const std::vector<bool> near = NearOptimalENodes(egraph, analytic_prices_, roots);
  for (ENodeId n = 0; n < egraph.num_node_ids(); ++n)
    if (const ENodeId first = FirstOutput(egraph, n); near[n] && first != kNoENode) near_candidates[first] = true;
  Measure(near_candidates);
}

int64_t PrunedPricing::MeasureToo(const std::vector<ENodeId>& nodes) {
  if (all_measured_) return 0;
  std::vector<bool> more(eg_.num_node_ids(), false);
  int64_t added = 0;
  for (ENodeId n : nodes) {
    const ENodeId first = FirstOutput(eg_, n);
    if (first == kNoENode || candidates_[first] || more[first] || analytic_prices_[first] <= 0) continue;
    more[first] = true;
    ++added;
  }
  return added > 0 ? Measure(more) : 0;
}

int64_t PrunedPricing::Measure(std::vector<bool> more) {
  const std::vector<double> now = PriceENodes(eg_, measured_, &more, context_, measure_until_);
  for (ENodeId n = 0; n < eg_.num_node_ids(); ++n)  // a first output not reached in time
    if (more[n] && std::isnan(now[n])) more[n] = false;
  for (ENodeId n = 0; n < eg_.num_node_ids(); ++n) {
    const ENodeId first = FirstOutput(eg_, n);
    if (first != kNoENode && more[first]) measured_prices_[n] = now[n];
  }
  int64_t measured = 0;
  for (ENodeId n = 0; n < eg_.num_node_ids(); ++n) {
    measured += more[n] && !candidates_[n];
    candidates_[n] = candidates_[n] || more[n];
  }
  Reprice();
  return measured;
}

// Measured over analytic price, per operator and over all: small operators (an Add of
// a row) cost a runtime far more than their work, so one ratio for all would price an
// unmeasured elementwise e-node far below its measured peers.
void PrunedPricing::Reprice() {
  struct Sums {
    double analytic = 0, measured = 0;
    double Ratio(double otherwise) const { return analytic > 0 && measured > 0 ? measured / analytic : otherwise; }
  };
  Sums all;
  absl::flat_hash_map<const OpDef*, Sums> by_op;
  stats_ = PricingStats{};
  for (ENodeId n = 0; n < eg_.num_node_ids(); ++n) {
    if (analytic_prices_[n] <= 0 || eg_.node(n).output != 0) continue;
    ++stats_.priced;
    if (!candidates_[n]) continue;
    ++stats_.measured;
    for (Sums* sums : {&all, &by_op[eg_.node(n).op]}) {
      sums->analytic += analytic_prices_[n];
      sums->measured += measured_prices_[n];
    }
  }
  stats_.scale = all.Ratio(1);
  prices_ = analytic_prices_;
  for (ENodeId n = 0; n < eg_.num_node_ids(); ++n) {
    const ENodeId first = FirstOutput(eg_, n);
    if (first != kNoENode && candidates_[first]) {
      prices_[n] = measured_prices_[n];
    } else if (prices_[n] > 0) {
      auto it = by_op.find(eg_.node(n).op);
      prices_[n] *= it == by_op.end() ? stats_.scale : it->second.Ratio(stats_.scale);
    }
  }
}

std::vector<double> PriceWithPruning(const EGraph& egraph, CostModel& analytic, CostModel& measured,
                                     const std::vector<ClassId>& roots, PricingStats& stats,
                                     const PricingContext* context) {
  PrunedPricing pricing(egraph, analytic, measured, roots, context);
  stats = pricing.stats();
  return pricing.prices();
}

}  // namespace taso::egraph
