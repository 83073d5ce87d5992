// Proves encoded rules from the axioms with Z3, one query per rule with a timeout, on
// several threads (each with its own Z3 context).
#pragma once

#include <string>
#include <vector>

#include "axioms.h"
#include "encode.h"

namespace taso::verify {

enum class Verdict { kProved, kNotProved, kTimedOut };
const char* VerdictName(Verdict v);

struct Outcome {
  std::string rule;
  Verdict verdict = Verdict::kNotProved;
  double seconds = 0;
};

struct ProveOptions {
  unsigned timeout_ms = 2000;
  int jobs = 2;
};

// Encodes every rule; fails for a rule the signature cannot express or one that uses a
// function no axiom is about.
absl::StatusOr<std::vector<EncodedRule>> EncodeRules(const AxiomSet& axioms, const std::vector<Rule>& rules);

// One outcome per rule, in the rules' order.
std::vector<Outcome> ProveRules(const AxiomSet& axioms, const std::vector<EncodedRule>& rules,
                                const ProveOptions& options);

}  // namespace taso::verify
