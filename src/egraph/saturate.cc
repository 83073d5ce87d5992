#include "taso/egraph/saturate.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "taso/egraph/derivation.h"
#include "taso/egraph/ematch.h"
#include "taso/egraph/independence.h"
#include "taso/egraph/join_pieces.h"
#include "taso/egraph/rule_selection.h"
#include "taso/ir/ops/concat.h"

namespace taso::egraph {

namespace {

using Clock = std::chrono::steady_clock;

// Whether the target concatenates one class with itself where the rule joins two
// different inputs (two products on joined inputs matched on two products of one input):
// that duplicates the input's work, which the rule was not meant to do.
bool JoinsAClassWithItself(const Rule& rule, const EMatch& m) {
  const int num_inputs = static_cast<int>(rule.inputs.size());
  for (const RuleOp& op : rule.target.ops) {
    if (!ops::IsConcat(*op.op) || op.inputs.size() != 2) continue;
    const int a = op.inputs[0], b = op.inputs[1];
    if (a != b && a < num_inputs && b < num_inputs && m.tensors[a] == m.tensors[b]) return true;
  }
  return false;
}

// Whether the target can be added at the match: each target operator's shape rule holds
// at the matched classes' types, and each target output has the type of the source
// output it will be merged with. Checked before anything is added, so that a refused
// match leaves no e-node behind.
bool TargetFits(const EGraph& eg, const Rule& rule, const EMatch& m) {
  std::vector<OutputType> types;  // per target tensor
  std::vector<const TensorData*> constants;
  for (size_t i = 0; i < rule.inputs.size(); ++i) {
    const EClass& cls = eg.eclass(m.tensors[i]);
    types.push_back(cls.type);
    constants.push_back(cls.constant.get());
  }
  for (const RuleOp& op : rule.target.ops) {
    auto params = ResolvedParams(rule, op, [&](int t) -> const Shape& { return types[t].shape; });
    if (!params.ok()) return false;
    std::vector<InputInfo> infos;
    for (int t : op.inputs)
      infos.push_back(InputInfo{true, types[t].dtype, types[t].shape, types[t].shape_known, constants[t]});
    auto outs = op.op->InferTypes(*params, infos);
    if (!outs.ok() || static_cast<int>(outs->size()) != op.num_outputs) return false;
    types.insert(types.end(), outs->begin(), outs->end());
    constants.insert(constants.end(), outs->size(), nullptr);
  }
  for (size_t k = 0; k < rule.target.outputs.size(); ++k) {
    const OutputType& now = types[rule.target.outputs[k]];
    const OutputType& was = eg.eclass(m.tensors[rule.source.outputs[k]]).type;
    if (now.dtype != was.dtype || now.shape != was.shape) return false;
  }
  return true;
}

// Adds the target's e-nodes and merges its outputs with the source's; the number of
// merges made.
int ApplyTarget(EGraph& eg, const Rule& rule, const EMatch& m, RuleApplication application) {
  std::vector<ClassId> tensors(m.tensors.begin(), m.tensors.begin() + rule.inputs.size());
  for (const RuleOp& op : rule.target.ops) {
    auto params = ResolvedParams(rule, op, [&](int t) -> const Shape& { return eg.eclass(tensors[t]).type.shape; });
    if (!params.ok()) return 0;
    std::vector<ClassId> children;
    for (int t : op.inputs) children.push_back(tensors[t]);
    auto outs = eg.AddOp(op.op, *params, std::move(children), application);
    if (!outs.ok()) return 0;
    tensors.insert(tensors.end(), outs->begin(), outs->end());
  }
  int merges = 0;
  for (size_t k = 0; k < rule.target.outputs.size(); ++k)
    merges += eg.Merge(tensors[rule.target.outputs[k]], m.tensors[rule.source.outputs[k]]);
  return merges;
}

// Whether every output the match rewrites is weight-only: folded into one weight after
// extraction whatever form it takes, so another form changes no price and only grows
// the e-graph (concatenations and transposes of weights, each way round).
bool OnWeightsOnly(const EGraph& eg, const Rule& rule, const EMatch& m) {
  for (int out : rule.source.outputs)
    if (!eg.eclass(m.tensors[out]).weight_only) return false;
  return true;
}

uint64_t MatchKey(int rule, const EMatch& m) { return absl::HashOf(rule, m.nodes, m.tensors); }

// A multi-pattern match by the input-graph e-nodes it joins: the same products joined
// in another order, or by another nesting of merges of merges, only reorder or nest the
// concatenations the target makes, and would multiply the merges made (every subset of
// a sequence's steps, each in every order). `sources` are the matched e-nodes' sources.
uint64_t JoinedSourcesKey(int rule, const std::vector<ENodeId>& sources) { return absl::HashOf(rule, sources, -1); }

int Growth(const Rule& rule) {
  return static_cast<int>(rule.target.ops.size()) - static_cast<int>(rule.source.ops.size());
}

int MaxGrowth(const Rule& rule, const RuleScheduler& scheduler) {
  return rule.source.outputs.size() > 1 ? scheduler.max_multi_rule_growth : scheduler.max_rule_growth;
}

// How many matches of a rule are looked at, per match its limit allows: most matches of
// a rule that applied before were applied before, and only new ones count.
constexpr int64_t kMatchesFoundPerLimit = 8;

// Per rule: when its ban ends and how often it was banned (egg's backoff scheduler).
struct Schedule {
  int banned_until = 0;  // the first iteration it runs again
  int bans = 0;
};

class Saturation {
 public:
  Saturation(EGraph& eg, const std::vector<RuleMatcher>& rules)
      : eg_(eg), rules_(rules), redundant_(RedundantInEGraph(rules)) {}

  // Saturates within `limits` with the rules `only` marks (all where null), as `scheduler`
  // says. Phases run
  // one after another share what was applied and what each e-node derives from, so that
  // a later phase does not join again what an earlier one joined.
  SaturationStats RunPhase(const SaturationLimits& limits, const RuleScheduler& scheduler,
                           const std::vector<bool>* only) {
    limits_ = limits;
    scheduler_ = scheduler;
    start_ = Clock::now();
    deadline_ = start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limits.time_limit));
    schedule_.assign(rules_.size(), Schedule{});
    stats_ = SaturationStats{};
    // Rules that shrink the graph first, then those that keep its size, then growing
    // ones: where a limit stops an iteration midway, the likelier gains were tried.
    order_.clear();
    for (size_t r = 0; r < rules_.size(); ++r)
      if (Growth(rules_[r].rule()) <= MaxGrowth(rules_[r].rule(), scheduler) && !redundant_[r] && (!only || (*only)[r]))
        order_.push_back(static_cast<int>(r));
    std::stable_sort(order_.begin(), order_.end(),
                     [&](int a, int b) { return Growth(rules_[a].rule()) < Growth(rules_[b].rule()); });
    if (scheduler.join_wide_groups) JoinWideGroups();
    return Run();
  }

 private:
  SaturationStats Run() {
    for (;;) {
      if (auto hit = LimitHit()) {
        stats_.stop = *hit;
        break;
      }
      if (stats_.iterations >= limits_.max_iterations) {
        stats_.stop = SaturationStop::kIterations;
        break;
      }
      const int nodes_before = eg_.num_node_ids();
      const int64_t merges_before = stats_.merges;
      banned_now_ = false;
      std::optional<SaturationStop> hit = Iterate();
      eg_.Rebuild();
      if (!hit && scheduler_.join_readers) AddJoinedReaders(eg_, limits_.max_enodes, &derivation_);
      if (hit) {
        stats_.stop = *hit;
        break;
      }
      if (eg_.num_node_ids() == nodes_before && stats_.merges == merges_before && !banned_now_) {
        stats_.stop = SaturationStop::kSaturated;
        break;
      }
    }
    stats_.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    return stats_;
  }

  std::optional<SaturationStop> LimitHit() const {
    if (Clock::now() > deadline_) return SaturationStop::kTime;
    if (eg_.num_enodes() >= limits_.max_enodes) return SaturationStop::kNodes;
    if (eg_.ApproxBytes() >= limits_.max_bytes) return SaturationStop::kMemory;
    return std::nullopt;
  }

  // LimitHit, except that reaching the e-node limit first rebuilds the e-graph: e-nodes
  // added since the last Rebuild are often duplicates (their children were merged), and
  // the limit counts distinct e-nodes. Stops once the rebuilt e-graph is within 10% of
  // the limit, so that rebuilding is rare.
  std::optional<SaturationStop> LimitHitAfterCleanUp() {
    if (eg_.num_enodes() >= limits_.max_enodes) {
      eg_.Rebuild();
      if (eg_.num_enodes() >= limits_.max_enodes * 9 / 10) return SaturationStop::kNodes;
    }
    return LimitHit();
  }

  // The rule's matches this iteration; none when it is banned or becomes banned.
  std::vector<EMatch> Matches(int r) {
    Schedule& s = schedule_[r];
    const int iteration = stats_.iterations;
    if (iteration < s.banned_until) {
      banned_now_ = true;
      return {};
    }
    const bool multi = rules_[r].rule().source.outputs.size() > 1;
    const int64_t limit = (multi ? scheduler_.multi_match_limit : scheduler_.match_limit) << std::min(s.bans, 20);
    const int64_t most_found = limit * kMatchesFoundPerLimit;
    std::vector<EMatch> found = FindMatches(eg_, rules_[r], deadline_, most_found + 1);
    const bool all_found = static_cast<int64_t>(found.size()) <= most_found;
    // Matches applied before add nothing, nor joins of products another match joins:
    // only the first new match of each counts toward the limit.
    absl::flat_hash_set<uint64_t> joins;
    std::erase_if(found, [&](const EMatch& m) { return !IsNew(r, m, joins); });
    if (all_found && static_cast<int64_t>(found.size()) <= limit) return found;
    s.banned_until = iteration + (scheduler_.ban_iterations << std::min(s.bans, 20));
    ++s.bans;
    banned_now_ = true;
    return {};
  }

  // One iteration: each rule matched and applied in turn; a limit may stop it midway.
  std::optional<SaturationStop> Iterate() {
    const bool multi_allowed = stats_.iterations < scheduler_.multi_pattern_iterations;
    ++stats_.iterations;
    for (int r : order_) {
      if (rules_[r].rule().source.outputs.size() > 1 && !multi_allowed) continue;
      for (const EMatch& m : Matches(r)) {
        if (!Apply(r, m)) continue;
        if (auto hit = LimitHitAfterCleanUp()) return hit;
      }
      if (auto hit = LimitHit()) return hit;
    }
    return std::nullopt;
  }

  // Applies the match unless it was applied before or is refused (on weights only, a
  // class joined with itself, a target that does not fit, a join made before or of
  // dependent products); whether it was applied.
  bool Apply(int r, const EMatch& m) {
    const Rule& rule = rules_[r].rule();
    if (OnWeightsOnly(eg_, rule, m) || !applied_.insert(MatchKey(r, m)).second || JoinsAClassWithItself(rule, m) ||
        !TargetFits(eg_, rule, m))
      return false;
    if (rule.source.outputs.size() > 1 && !IsNewIndependentJoin(r, m)) return false;
    ++stats_.matches;
    const ENodeId first_new = eg_.num_node_ids();
    // Numbered by its first e-node's id: distinct across saturation phases too.
    stats_.merges += ApplyTarget(eg_, rule, m, RuleApplication{r, static_cast<int32_t>(first_new)});
    derivation_.Record(m.nodes, first_new, eg_.num_node_ids());
    return true;
  }

  // Where one rule joins two operators (a merge of two products of one input) and its
  // matches tie more than kWideGroup input-graph e-nodes together, saturation would make
  // every subset of them (2^36 for 36 per-head projections) and stop at a limit with
  // sets of a few. Such a group is first joined along one chain, in e-node order: the
  // rule applied to the first two, then to their join and the third, and so on, each
  // application checked as any other. Its prefixes are in the e-graph too, and the
  // chain's nested Splits get one Split of the whole after saturation (join_pieces.h).
  void JoinWideGroups() {
    for (int r : order_) {
      const Rule& rule = rules_[r].rule();
      if (rule.source.outputs.size() != 2 || rule.source.ops.size() != 2) continue;
      for (const std::vector<ENodeId>& group : WideGroups(r)) {
        JoinAlongChain(r, group);
        if (LimitHit()) return;
      }
    }
  }

  static constexpr size_t kWideGroup = 8;

  // The groups of input-graph e-nodes the rule's matches tie together, of more than
  // kWideGroup e-nodes each, sorted.
  std::vector<std::vector<ENodeId>> WideGroups(int r) {
    constexpr int64_t kMostMatches = 20000;
    absl::flat_hash_map<ENodeId, ENodeId> parent;
    auto find = [&](ENodeId n) {
      while (parent.at(n) != n) n = parent[n] = parent.at(parent.at(n));
      return n;
    };
    for (const EMatch& m : FindMatches(eg_, rules_[r], deadline_, kMostMatches)) {
      if (derivation_.SourcesOf(m.nodes[0]).size() != 1 || derivation_.SourcesOf(m.nodes[1]).size() != 1 ||
          m.nodes[0] == m.nodes[1])
        continue;
      for (ENodeId n : m.nodes) parent.try_emplace(n, n);
      parent[find(m.nodes[0])] = find(m.nodes[1]);
    }
    absl::flat_hash_map<ENodeId, std::vector<ENodeId>> groups;
    for (const auto& [n, unused] : parent) groups[find(n)].push_back(n);
    std::vector<std::vector<ENodeId>> wide;
    for (auto& [root, members] : groups)
      if (members.size() > kWideGroup) {
        std::sort(members.begin(), members.end());
        wide.push_back(std::move(members));
      }
    std::sort(wide.begin(), wide.end());
    return wide;
  }

  void JoinAlongChain(int r, const std::vector<ENodeId>& group) {
    std::vector<ENodeId> joined = {group[0]};
    for (size_t k = 1; k < group.size() && !LimitHit(); ++k) {
      std::vector<ENodeId> wanted = joined;
      wanted.push_back(group[k]);
      std::sort(wanted.begin(), wanted.end());
      eg_.Rebuild();
      bool applied = false;
      for (const EMatch& m : FindMatches(eg_, rules_[r], deadline_, int64_t{1} << 20))
        if (derivation_.DisjointSources(m.nodes) == wanted && (applied = Apply(r, m))) break;
      if (!applied) return;
      joined = std::move(wanted);
    }
  }

  // The key of the input-graph e-nodes a multi-pattern match joins (JoinedSourcesKey);
  // nullopt where it joins a product with a part of itself.
  std::optional<uint64_t> JoinKey(int r, const EMatch& m) const {
    const std::vector<ENodeId> sources = derivation_.DisjointSources(m.nodes);
    if (sources.empty()) return std::nullopt;
    return JoinedSourcesKey(r, sources);
  }

  // Whether the match was not applied before, nor (for a multi-pattern) joins products
  // joined before, by an earlier match in `joins`, or a product with a part of itself.
  bool IsNew(int r, const EMatch& m, absl::flat_hash_set<uint64_t>& joins) const {
    if (applied_.contains(MatchKey(r, m))) return false;
    if (rules_[r].rule().source.outputs.size() == 1) return true;
    const std::optional<uint64_t> join = JoinKey(r, m);
    return join && !applied_.contains(*join) && joins.insert(*join).second;
  }

  // Whether a multi-pattern match joins e-nodes derived from disjoint input-graph
  // e-nodes, not joined by this rule before, and independent in the e-graph.
  bool IsNewIndependentJoin(int r, const EMatch& m) {
    const std::optional<uint64_t> join = JoinKey(r, m);
    return join && applied_.insert(*join).second && MatchIsIndependent(eg_, rules_[r].rule(), m);
  }

  EGraph& eg_;
  const std::vector<RuleMatcher>& rules_;
  const std::vector<bool> redundant_;  // RedundantInEGraph
  SaturationLimits limits_;            // the phase's
  RuleScheduler scheduler_;            // the phase's
  Clock::time_point start_, deadline_;
  std::vector<int> order_;  // the rules applied, in the order they are
  std::vector<Schedule> schedule_;
  bool banned_now_ = false;  // some rule was skipped this iteration for its ban
  // The matches applied (or refused) before: applying one again adds nothing, since its
  // equalities hold already. Keyed by rule, e-nodes and the input classes then.
  absl::flat_hash_set<uint64_t> applied_;
  Derivation derivation_;
  SaturationStats stats_;
};

}  // namespace

SaturationStats Saturate(EGraph& egraph, const std::vector<RuleMatcher>& rules, const SaturationLimits& limits,
                         const RuleScheduler& scheduler) {
  return Saturation(egraph, rules).RunPhase(limits, scheduler, nullptr);
}

std::pair<SaturationStats, SaturationStats> SaturateJoiningFirst(EGraph& egraph, const std::vector<RuleMatcher>& rules,
                                                                 const SaturationLimits& limits,
                                                                 const RuleScheduler& scheduler) {
  const std::vector<bool> joins = JoinsWork(rules);
  SaturationLimits joining = limits;
  joining.time_limit = limits.time_limit / 2;
  RuleScheduler joining_scheduler = scheduler;
  joining_scheduler.join_readers = true;
  joining_scheduler.join_wide_groups = true;
  joining_scheduler.match_limit = scheduler.multi_match_limit;  // few rules: each may match as often as merges do
  Saturation saturation(egraph, rules);
  const SaturationStats first = saturation.RunPhase(joining, joining_scheduler, &joins);
  SaturationLimits rest = limits;
  rest.time_limit = std::max(0.0, limits.time_limit - first.seconds);
  rest.max_enodes = std::max(limits.max_enodes, egraph.num_enodes() + limits.max_enodes / 4);
  SaturationStats both = saturation.RunPhase(rest, scheduler, nullptr);
  both.iterations += first.iterations;
  both.matches += first.matches;
  both.merges += first.merges;
  both.seconds += first.seconds;
  return {first, both};
}

}  // namespace taso::egraph
