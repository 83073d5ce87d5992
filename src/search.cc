#include "taso/search.h"

#include <chrono>
#include <queue>

#include "absl/container/flat_hash_set.h"

namespace taso {

std::vector<RuleMatcher> PrepareRules(const std::vector<Rule>& rules) {
  std::vector<RuleMatcher> out;
  for (const Rule& rule : rules)
    for (const Rule& instance : Instances(rule))
      for (const Rule& directed : {instance, Reversed(instance)})
        if (auto m = RuleMatcher::Create(directed); m.ok()) out.push_back(std::move(*m));
  return out;
}

namespace {

struct Candidate {
  double cost;
  int64_t order;  // when it was found: ties go to the earlier
  int index;      // into the store of graphs
  bool operator>(const Candidate& o) const { return cost != o.cost ? cost > o.cost : order > o.order; }
};

struct Stored {
  Graph graph;
  std::map<std::string, int> applied;
};

}  // namespace

SearchResult Optimize(const Graph& graph, const std::vector<RuleMatcher>& rules, CostModel& cost,
                      const SearchOptions& options) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  SearchResult result;
  result.initial_cost = result.best_cost = GraphCost(graph, cost);
  result.best = graph;
  std::vector<Stored> store;
  store.push_back({graph, {}});
  int best_index = 0;
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
  queue.push({result.initial_cost, 0, 0});
  absl::flat_hash_set<uint64_t> seen = {graph.StructuralHash()};
  int64_t found = 1;
  auto out_of_time = [&] {
    return std::chrono::duration<double>(Clock::now() - start).count() > options.time_limit;
  };
  while (!queue.empty()) {
    if (result.expansions >= options.budget || out_of_time()) {
      result.stopped_by_limit = true;
      break;
    }
    const Candidate c = queue.top();
    queue.pop();
    ++result.expansions;
    const Graph current = store[c.index].graph;  // a copy: the store grows below
    const std::map<std::string, int> applied = store[c.index].applied;
    const GraphIndex index(current);
    for (const RuleMatcher& rule : rules) {
      for (const Match& m : rule.FindAll(current, index)) {
        auto next = ApplyMatch(current, rule, m);
        if (!next.ok()) continue;
        if (!seen.insert(next->StructuralHash()).second) continue;
        const double next_cost = GraphCost(*next, cost);
        std::map<std::string, int> next_applied = applied;
        ++next_applied[rule.rule().name];
        if (next_cost < result.best_cost) {
          result.best_cost = next_cost;
          best_index = static_cast<int>(store.size());
        }
        // The best graph always passes this test, so it is always stored.
        if (next_cost < options.alpha * result.best_cost) {
          queue.push({next_cost, found++, static_cast<int>(store.size())});
          store.push_back({std::move(*next), std::move(next_applied)});
        }
      }
    }
    if (options.progress) options.progress(result.expansions, result.best_cost);
  }
  result.best = store[best_index].graph;
  result.rules_applied = store[best_index].applied;
  result.graphs_seen = static_cast<int64_t>(seen.size());
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace taso
