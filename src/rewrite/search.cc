#include "taso/rewrite/search.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace taso {

std::vector<RuleMatcher> PrepareRules(const std::vector<Rule>& rules, int* unusable) {
  std::vector<RuleMatcher> out;
  int refused = 0;
  for (const Rule& rule : rules)
    for (const Rule& instance : Instances(rule))
      for (const Rule& directed : {instance, Reversed(instance)}) {
        absl::StatusOr<RuleMatcher> m = RuleMatcher::Create(directed);
        if (m.ok())
          out.push_back(*std::move(m));
        else
          ++refused;
      }
  if (unusable) *unusable = refused;
  return out;
}

namespace {

struct Candidate {
  double cost;
  int64_t order;  // when it was found (ties go to the earlier); its key in the store
  bool operator<(const Candidate& o) const { return cost != o.cost ? cost < o.cost : order < o.order; }
};

// What applying the match would change in the graph's cost: the target's operators on
// the matched shapes, less the matched nodes (operators on weights alone cost nothing in
// either). Unset when the target's shape rules fail at these shapes. Cheap next to
// building the rewritten graph, which is done only for candidates that can be kept.
std::optional<double> CostDelta(const Graph& graph, const WeightOnly& weight_only,
                                const std::vector<double>& node_costs, const RuleMatcher& rule, const Match& m,
                                CostModel& cost) {
  const Rule& r = rule.rule();
  std::vector<Shape> shapes;
  std::vector<bool> constant;  // per target tensor: computable ahead of time
  for (size_t i = 0; i < r.inputs.size(); ++i) {
    shapes.push_back(graph.value(m.tensors[i]).shape);
    constant.push_back(weight_only.values[m.tensors[i]]);
  }
  auto target = InstantiateRuleGraph(r, r.target, shapes);
  if (!target.ok()) return std::nullopt;
  double delta = 0;
  for (NodeId n = 0; n < target->num_nodes(); ++n) {
    const Node& node = target->node(n);
    const bool ahead = IsWeightOnlyNode(node, constant);
    constant.insert(constant.end(), node.outputs.size(), ahead);
    if (!ahead) delta += cost.NodeCost(*target, n);
  }
  for (NodeId n : m.nodes)
    if (!weight_only.nodes[n]) delta -= node_costs[n];
  return delta;
}

struct Stored {
  Graph graph;
  std::map<std::string, int> applied;
  std::vector<AppliedRewrite> path;
};

AppliedRewrite Record(const Graph& graph, size_t matcher, const Match& m) {
  AppliedRewrite step{matcher, {}};
  for (ValueId v : m.tensors) step.tensors.push_back(graph.value(v).name);
  return step;
}

// The match of `step` in `graph`, found by the names of its values.
std::optional<Match> FindRecorded(const Graph& graph, const RuleMatcher& rule, const AppliedRewrite& step) {
  for (Match& m : rule.FindAll(graph, GraphIndex(graph))) {
    if (m.tensors.size() != step.tensors.size()) continue;
    bool same = true;
    for (size_t t = 0; same && t < m.tensors.size(); ++t) same = graph.value(m.tensors[t]).name == step.tensors[t];
    if (same) return std::move(m);
  }
  return std::nullopt;
}

// How many graphs like `graph` the queue may hold (SearchOptions::max_queue_bytes).
int64_t QueueCapacity(const Graph& graph, const SearchOptions& options) {
  const int64_t by_memory = options.max_queue_bytes / std::max<int64_t>(1, graph.ApproxBytes());
  return std::clamp<int64_t>(by_memory, 1, options.max_queue);
}

}  // namespace

absl::StatusOr<Graph> ReplayRewrites(const Graph& graph, const std::vector<RuleMatcher>& rules,
                                     const std::vector<AppliedRewrite>& path, const std::vector<bool>& keep,
                                     std::map<std::string, int>* applied) {
  Graph current = graph;
  for (size_t i = 0; i < path.size(); ++i) {
    if (i >= keep.size() || !keep[i] || path[i].matcher >= rules.size()) continue;
    const RuleMatcher& rule = rules[path[i].matcher];
    const std::optional<Match> m = FindRecorded(current, rule, path[i]);
    if (!m) continue;
    absl::StatusOr<Graph> next = ApplyMatch(current, rule, *m);
    if (!next.ok()) continue;
    current = *std::move(next);
    if (applied) ++(*applied)[rule.rule().name];
  }
  return current;
}

SearchResult Optimize(const Graph& graph, const std::vector<RuleMatcher>& rules, CostModel& cost,
                      const SearchOptions& options) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  SearchResult result;
  result.initial_cost = result.best_cost = cost.TotalCost(graph);
  result.best = graph;
  // The queue, cheapest first, holding at most `max_queue` graphs: past that the costliest
  // are dropped, which bounds memory.
  const int64_t max_queue = QueueCapacity(graph, options);
  std::set<Candidate> queue;
  absl::flat_hash_map<int64_t, Stored> store;
  store[0] = {graph, {}};
  queue.insert({result.initial_cost, 0});
  absl::flat_hash_set<uint64_t> seen = {graph.StructuralHash()};
  int64_t found = 1;
  auto out_of_time = [&] { return std::chrono::duration<double>(Clock::now() - start).count() > options.time_limit; };
  while (!queue.empty()) {
    if (result.stats.expansions >= options.budget) {
      result.stats.stop_reason = StopReason::kBudget;
      break;
    }
    if (out_of_time()) {
      result.stats.stop_reason = StopReason::kTimeLimit;
      break;
    }
    const Candidate c = *queue.begin();
    queue.erase(queue.begin());
    auto node = store.extract(c.order);
    const Graph& current = node.mapped().graph;
    const std::map<std::string, int>& applied = node.mapped().applied;
    const std::vector<AppliedRewrite>& path = node.mapped().path;
    ++result.stats.expansions;
    const GraphIndex index(current);
    const WeightOnly weight_only = FindWeightOnly(current);
    std::vector<double> node_costs(current.num_nodes(), 0.0);
    for (NodeId n = 0; n < current.num_nodes(); ++n)
      if (!weight_only.nodes[n]) node_costs[n] = cost.NodeCost(current, n);
    for (size_t r = 0; r < rules.size(); ++r) {
      const RuleMatcher& rule = rules[r];
      if (out_of_time()) break;  // an expansion of a large graph can take seconds
      for (const Match& m : rule.FindAll(current, index)) {
        if (out_of_time()) break;  // each match copies the graph: thousands take long
        // Skips what cannot be kept before building it (a little slack for rounding).
        const std::optional<double> delta = CostDelta(current, weight_only, node_costs, rule, m, cost);
        if (!delta || c.cost + *delta >= options.alpha * result.best_cost * (1 + 1e-9)) continue;
        auto next = ApplyMatch(current, rule, m);
        if (!next.ok()) continue;
        if (!seen.insert(next->StructuralHash()).second) continue;
        const double next_cost = cost.TotalCost(*next);
        if (next_cost >= options.alpha * result.best_cost) continue;
        std::map<std::string, int> next_applied = applied;
        ++next_applied[rule.rule().name];
        std::vector<AppliedRewrite> next_path = path;
        next_path.push_back(Record(current, r, m));
        if (next_cost < result.best_cost) {
          result.best_cost = next_cost;
          result.best = *next;
          result.rules_applied = next_applied;
          result.path = next_path;
        }
        const int64_t id = found++;
        queue.insert({next_cost, id});
        store[id] = {std::move(*next), std::move(next_applied), std::move(next_path)};
        if (static_cast<int64_t>(queue.size()) > max_queue) {
          store.erase(std::prev(queue.end())->order);
          queue.erase(std::prev(queue.end()));
        }
      }
    }
    if (options.progress) options.progress(result.stats.expansions, result.best_cost);
  }
  result.stats.graphs_seen = static_cast<int64_t>(seen.size());
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace taso
