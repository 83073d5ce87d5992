// The cost-based backtracking search over substitutions (TASO Algorithm 2): graphs in a
// priority queue by cost, each expanded by every match of every rule; a new graph is
// kept when it costs less than alpha times the best so far.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "taso/ir/graph.h"
#include "taso/rewrite/cost.h"
#include "taso/rewrite/match.h"

namespace taso {

struct SearchOptions {
  double alpha = 1.05;
  int64_t budget = 1000;     // graphs expanded at most
  double time_limit = 40;    // seconds
  int64_t max_queue = 1000;  // graphs waiting at most (the costliest are dropped)
  // Memory the waiting graphs may take (Graph::ApproxBytes of the input each): on a large
  // graph this holds the queue below max_queue, to at least one graph.
  int64_t max_queue_bytes = int64_t{1} << 30;
  // Called after each expansion with the expansions done and the best cost.
  std::function<void(int64_t expansions, double best_cost)> progress;
};

// Why the search ended.
enum class StopReason {
  kQueueEmpty,  // no graph left to expand
  kBudget,      // SearchOptions::budget graphs expanded, with graphs left
  kTimeLimit,   // SearchOptions::time_limit passed, with graphs left
};

// As reports spell it: queue_empty, budget, time_limit.
constexpr absl::string_view StopReasonName(StopReason reason) {
  switch (reason) {
    case StopReason::kQueueEmpty:
      return "queue_empty";
    case StopReason::kBudget:
      return "budget";
    case StopReason::kTimeLimit:
      return "time_limit";
  }
  return "?";
}

// One rewrite on the path to the best graph, recorded so that a subset can be replayed:
// the matcher applied and the names of the values it matched (a rewrite keeps the names
// of the values it does not replace, so they find the match again in another graph).
struct AppliedRewrite {
  size_t matcher = 0;                // index into the matchers the search ran with
  std::vector<std::string> tensors;  // per Match::tensors, the value's name
};

// What a substitution search found, whichever engine ran it: the best graph, its cost
// and the input's by the search's cost model, and the rules on the way to it.
struct SearchFound {
  Graph best;
  double initial_cost = 0, best_cost = 0;
  double seconds = 0;
  std::map<std::string, int> rules_applied;  // on the path to the best graph
  // The same rewrites, in the order applied; empty where the engine records none (the
  // e-graph's extraction: its rewrites can be undone only as a whole).
  std::vector<AppliedRewrite> path;
};

// The backtracking search's own figures.
struct BacktrackingStats {
  int64_t expansions = 0, graphs_seen = 0;
  StopReason stop_reason = StopReason::kQueueEmpty;
};

struct SearchResult : SearchFound {
  BacktrackingStats stats;
};

// Both directions of every instance of every rule, as matchers; directed instances the
// matcher cannot use (no operator to match, an input passed through) are left out, and
// counted in `unusable` when given.
std::vector<RuleMatcher> PrepareRules(const std::vector<Rule>& rules, int* unusable = nullptr);

// The rewrites of `path` marked in `keep` applied to `graph` (the search's input) in order;
// one whose match is gone (a dropped rewrite made it) is skipped. `applied` gets the
// rule names with their counts, as SearchResult::rules_applied.
absl::StatusOr<Graph> ReplayRewrites(const Graph& graph, const std::vector<RuleMatcher>& rules,
                                     const std::vector<AppliedRewrite>& path, const std::vector<bool>& keep,
                                     std::map<std::string, int>* applied = nullptr);

// Deterministic for given inputs: ties in cost go to the graph found first.
SearchResult Optimize(const Graph& graph, const std::vector<RuleMatcher>& rules, CostModel& cost,
                      const SearchOptions& options);

}  // namespace taso
