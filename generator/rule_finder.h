// From fingerprint collisions to rules: candidates confirmed on floats, redundant ones
// pruned (TASO section 2.5: input renaming, both forms of common subgraph), rules that
// held only at the generator's sizes dropped, and the rest written as shape-agnostic
// rules.
#pragma once

#include <string>
#include <vector>

#include "enumerator.h"
#include "taso/rules.h"

namespace taso::gen {

// Two graphs with equal outputs: a.outputs[i] equals b.outputs[i].
struct Candidate {
  GraphCode a, b;
  std::vector<int> a_outputs, b_outputs;
};

struct PruneCounts {
  size_t candidates = 0;
  size_t after_renaming = 0;
  size_t after_size_check = 0;
  size_t after_common_subgraph = 0;
};

// Confirms the pairs of each fingerprint group on float inputs in [-1, 1].
std::vector<Candidate> ConfirmCandidates(const Enumerator& e, const std::vector<Fingerprinted>& groups,
                                         int threads, int test_cases = 11);

// Prunes and converts the candidates to rules, sorted deterministically.
std::vector<Rule> MakeRules(const Enumerator& e, const std::vector<Candidate>& candidates, PruneCounts* counts);

}  // namespace taso::gen
