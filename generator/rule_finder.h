// From candidates to rules (TASO section 2.5): candidates equal up to a renaming of their
// inputs are one; a rule is pruned when a more general one is valid (two of its inputs
// merged, or a common subgraph taken out of both graphs); the rest must hold on floats at
// the generator's sizes and at others, and are written as shape-agnostic rules.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "candidates.h"
#include "taso/rules.h"

namespace taso::gen {

struct PruneCounts {
  size_t candidates = 0;             // pairs of graphs with equal fingerprints
  size_t distinct = 0;               // distinct up to a renaming of their inputs
  size_t after_renaming = 0;         // not an instance of a valid rule with more inputs
  size_t after_common_subgraph = 0;  // no common subgraph whose removal leaves a valid rule
  size_t after_float_checks = 0;     // hold on floats at several sizes
  size_t after_parameters = 0;       // families differing only in parameters merged: the rules
};

// The graphs sharing a fingerprint, in fingerprint then code order (the order of
// Enumerator::Enumerate): calls `emit` on each run of equal fingerprints in turn.
using SharedRuns =
    std::function<absl::Status(const std::function<void(absl::Span<const Fingerprinted>)>& emit)>;

// The rules, sorted deterministically (fewer operators first). `phase` is told when each
// stage is done. Errors are those of `runs`.
absl::StatusOr<std::vector<Rule>> FindRules(const Enumerator& e, const SharedRuns& runs, int threads,
                                             PruneCounts* counts,
                                             const std::function<void(const std::string&)>& phase);

}  // namespace taso::gen
