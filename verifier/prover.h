// Proves encoded rules from the axioms with Z3, one query per rule with a timeout, on
// several threads (each with its own Z3 context).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "axioms.h"
#include "encode.h"
#include "watchdog.h"

namespace taso::verify {

// kOverBudget: Z3 gave up having used the query's resource budget or its wall-clock limit.
enum class Verdict { kProved, kNotProved, kOverBudget };
const char* VerdictName(Verdict v);

struct Outcome {
  std::string rule;
  Verdict verdict = Verdict::kNotProved;
  double seconds = 0;
  uint64_t resources = 0;  // Z3's resource count of the rule's query (its "rlimit count")
};

// A query is bounded by Z3's resource count, which depends on the work done and not on
// the machine's load, so a verdict is the same on a busy CI machine as on an idle one. The
// shipped rules' proofs use at most 1.2 million (r5391), half of them under 12 thousand. The
// wall-clock limit only guards against a query that stops counting (Z3 does not check
// every limit while it instantiates quantifiers).
struct ProveOptions {
  QueryBudget budget{20'000'000, 60'000};
  int jobs = 2;
};

// Encodes every rule; fails for a rule the signature cannot express or one that uses a
// function no axiom is about.
absl::StatusOr<std::vector<EncodedRule>> EncodeRules(const AxiomSet& axioms, const std::vector<Rule>& rules);

// One outcome per rule, in the rules' order.
std::vector<Outcome> ProveRules(const AxiomSet& axioms, const std::vector<EncodedRule>& rules,
                                const ProveOptions& options);

}  // namespace taso::verify
