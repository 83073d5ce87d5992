// Equality saturation: every rule matched on the e-graph, each match's target added and
// its outputs merged with the source's, iteration after iteration until nothing changes
// or a limit stops it.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "taso/egraph/egraph.h"
#include "taso/rewrite/match.h"

namespace taso::egraph {

// When saturation stops: the first limit reached ends it (SaturationStop says which).
struct SaturationLimits {
  int max_iterations = 15;
  int64_t max_enodes = 20000;            // SaturateJoiningFirst's second phase may exceed it (see there)
  double time_limit = 6;                 // seconds: with extraction (3 s more), under 10
  int64_t max_bytes = int64_t{1} << 30;  // approximate (EGraph::ApproxBytes)
};

// Which rules apply, when and how often.
struct RuleScheduler {
  // Rules with several outputs (multi-patterns, such as merging two products of one
  // input) are applied in the first iterations only: each application makes new pairs
  // to merge, so they alone would fill the e-graph (Tensat does the same). Three let
  // merges of merges join up to eight products (the steps of a sequence sharing a
  // weight); matches on dependent or overlapping operators are not applied
  // (MatchIsIndependent), nor a join of products joined before (Derivation), which
  // keeps the later iterations small.
  int multi_pattern_iterations = 3;
  // After each iteration, the readers of each two-piece Split's pieces are joined
  // (AddJoinedReaders): what lets rules merge the work that reads a merge's pieces.
  // SaturateJoiningFirst sets it in its first phase.
  bool join_readers = false;
  // Before the first iteration, where one merge rule ties more than eight products
  // together (36 per-head projections of one input), they are joined along one chain
  // (N-1 applications of the rule) rather than in every subset. SaturateJoiningFirst sets
  // it in its first phase.
  bool join_wide_groups = false;
  // Rules whose target has more operators than their source by more than this are left
  // out: generated rules such as A + B = T(T(A) + T(B)) apply to every tensor and
  // again to what they make, and would fill the e-graph with nothing cheaper.
  int max_rule_growth = 1;
  // The same for rules with several outputs, which apply in the first iterations only:
  // merging two products with their biases takes two more operators (the weights' and
  // the biases' concatenations) than it removes.
  int max_multi_rule_growth = 2;
  // A rule with more than match_limit * 2^k new matches in one iteration (k: how often it
  // was banned before) is banned for ban_iterations * 2^k iterations, its matches not
  // applied (egg's backoff scheduler), so that no one rule fills the e-graph. Matches
  // applied before do not count (they add nothing), nor, of a multi-pattern, matches
  // joining products another match of the iteration joins; nor are more than eight
  // times the limit looked at.
  int64_t match_limit = 1000;
  // The same for rules with several outputs. Their matches are pairs of roots, whose
  // number grows with the square of the e-nodes, and most of them join products that
  // were joined before (in another order or nesting: not applied again); at the common
  // limit the merge of an LSTM's five steps was banned in the third iteration.
  int64_t multi_match_limit = 16000;
  int ban_iterations = 2;
};

// kNotBuilt: the graph could not be made an e-graph (OptimizeWithEGraph keeps the input).
enum class SaturationStop { kSaturated, kIterations, kNodes, kTime, kMemory, kNotBuilt };

// As reports spell it: saturated, iterations, nodes, time, memory, not_built.
constexpr absl::string_view SaturationStopName(SaturationStop stop) {
  switch (stop) {
    case SaturationStop::kSaturated:
      return "saturated";
    case SaturationStop::kIterations:
      return "iterations";
    case SaturationStop::kNodes:
      return "nodes";
    case SaturationStop::kTime:
      return "time";
    case SaturationStop::kMemory:
      return "memory";
    case SaturationStop::kNotBuilt:
      return "not_built";
  }
  return "?";
}

struct SaturationStats {
  int iterations = 0;  // begun
  int64_t matches = 0, merges = 0;
  SaturationStop stop = SaturationStop::kSaturated;
  double seconds = 0;
};

// Rewrites `egraph` with `rules` (their index is what new e-nodes record in made_by.rule).
// A match adds the target only where every target operator's shape rule holds at the
// matched classes' shapes and each target output has the type of the source output it
// is merged with. Deterministic: rules in order, matches in the order found.
SaturationStats Saturate(EGraph& egraph, const std::vector<RuleMatcher>& rules, const SaturationLimits& limits,
                         const RuleScheduler& scheduler = {});

// Saturation in two phases: first the rules that join work (JoinsWork: merges of
// products, and the rules that join what reads a merge's pieces, with the readers joined
// after each iteration) within half the time and all the e-nodes; then every rule within
// the time left and the e-nodes left, or a quarter of `limits.max_enodes` more where the
// first phase left less. Applied together, the other rules (a transposed form of every
// product, each way round) fill the e-graph before merges of merges are made: eight task
// heads' first layers were merged in pairs at most. Eight heads' merge takes its 255
// subsets of heads, about 15,000 e-nodes, before both layers are one product each; at
// half the e-nodes the first phase stopped at merges of four. The second phase applies merges again
// (after rewrites that make them match) but never joins what the first one joined.
// Returns the first phase's statistics and both phases'.
std::pair<SaturationStats, SaturationStats> SaturateJoiningFirst(EGraph& egraph, const std::vector<RuleMatcher>& rules,
                                                                 const SaturationLimits& limits,
                                                                 const RuleScheduler& scheduler = {});

}  // namespace taso::egraph
