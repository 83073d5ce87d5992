// Where a rule's source pattern occurs in a graph (TASO 2.6), and the graph with one
// occurrence replaced by the rule's target.
#pragma once

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "taso/ir/graph.h"
#include "taso/rules/rules.h"

namespace taso {

// What matching needs of a graph, computed once per graph.
struct GraphIndex {
  explicit GraphIndex(const Graph& graph);
  UseIndex uses;
  std::vector<std::optional<Params>> rule_params;                   // per node: OpDef::RuleParams
  absl::flat_hash_map<const OpDef*, std::vector<NodeId>> nodes_of;  // per operator, in id order
};

struct Match {
  std::vector<NodeId> nodes;     // per source operator
  std::vector<ValueId> tensors;  // per source tensor: the rule's inputs, then its operators' outputs
};

// A concrete rule (no variables) prepared for matching.
class RuleMatcher {
 public:
  // Fails for a rule with variables (match its Instances) or an operator whose
  // parameters are no generator variant's.
  static absl::StatusOr<RuleMatcher> Create(const Rule& rule);
  const Rule& rule() const { return rule_; }
  // Per source operator: the generator variant it was made from (its shape conditions).
  const std::vector<GeneratorVariant>& variants() const { return variants_; }

  // Every legal match, in a deterministic order. Operators match when their rule form
  // (OpDef::RuleParams) equals the rule's parameters and the inputs meet the variant's
  // shape conditions; commutative operators match in both input orders. A match is legal
  // when no tensor inside it is read outside it or is a graph output, unless it is one
  // of the source's outputs (the target then provides it).
  std::vector<Match> FindAll(const Graph& graph, const GraphIndex& index) const;

 private:
  Rule rule_;
  std::vector<GeneratorVariant> variants_;  // per source operator
};

// The graph with the match replaced by the rule's target. The target's outputs take the
// names of the source outputs they replace; weights no longer read are dropped. Fails
// when a target shape rule does not hold, a replaced output would change shape, or the
// rewrite would make a cycle.
absl::StatusOr<Graph> ApplyMatch(const Graph& graph, const RuleMatcher& rule, const Match& match);

}  // namespace taso
