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
#include "taso/rules/rules.h"
#include "team.h"

namespace taso::gen {

struct PruneCounts {
  size_t candidates = 0;             // pairs of graphs with equal fingerprints
  size_t distinct = 0;               // distinct up to a renaming of their inputs
  size_t after_renaming = 0;         // not an instance of a valid rule with more inputs
  size_t after_common_subgraph = 0;  // no common subgraph whose removal leaves a valid rule
  size_t after_float_checks = 0;     // hold on floats at several sizes
  size_t after_parameters = 0;       // families differing only in parameters merged: the rules
  uint64_t forms_disk_bytes = 0;     // the distinct forms' records written to disk
  size_t float_checks = 0;           // float checks made by the pruning stages, each once
};

// The graphs sharing a fingerprint, in fingerprint then code order (the order of
// Enumerator::Enumerate): calls `emit` on each run of equal fingerprints in turn.
using SharedRuns = std::function<absl::Status(const std::function<void(absl::Span<const Fingerprinted>)>& emit)>;

// Candidates are paired a slice of runs at a time (the order of the forms, and so which
// candidate stands for each, follows the slices): a slice of `graphs` graphs ends before
// the next run where this says so.
inline constexpr size_t kSliceGraphs = 1 << 18;
inline bool SliceEnds(size_t graphs) { return graphs >= kSliceGraphs; }

struct FinderOptions {
  int threads = 2;
  uint64_t memory_bytes = 256ull << 20;  // the forms' records in memory; past it on disk
  std::string spill_dir;                 // where (a fresh folder in it; empty: $TMPDIR or /tmp)
  size_t chunk = 1 << 16;                // forms read at once by the pruning stages
  size_t family_share = 1 << 18;         // rules whose parameter families are found at once
  // Where set (--changing): only candidates whose sides apply this operator a different
  // number of times are kept. A more general form of one (inputs apart, a common subgraph
  // taken out of both sides) changes the count as much, so the rules that change it are
  // those of a run without the filter, found without pruning all the others.
  std::string changing;
  // Told now and then how far a stage is: "candidates" (candidates so far, forms so far),
  // "input renaming checks" (merged forms decided, of those with a more general form),
  // else the forms done of all.
  std::function<void(const char* stage, size_t done, size_t total)> progress;
};

// Receives the rules in their final order and named, a batch at a time.
using RuleBatchSink = std::function<absl::Status(std::vector<Rule> batch)>;

// The rules, sorted deterministically (fewer operators first), to `sink`. `phase` is told
// when each stage is done. Errors are those of `runs`, of the spill files and of `sink`.
// In a team, each rank's `runs` are its share of the fingerprint shards, in rank order:
// every rank finds its candidates' forms, and rank 0 alone, with all of them, prunes and
// writes the rules (the others return once their forms are sent).
absl::Status FindRules(const Enumerator& e, const SharedRuns& runs, const FinderOptions& options, PruneCounts* counts,
                       const std::function<void(const std::string&)>& phase, const RuleBatchSink& sink, Team& team);

}  // namespace taso::gen
