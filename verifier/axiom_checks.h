// Checks of the axiom set itself (TASO 2.4): that it is consistent (some model satisfies
// every axiom) and which axioms follow from the others (redundant ones).
//
// Each redundancy query runs in a Z3 context of its own, bounded by Z3's resource limit
// (a count of its steps, the same on every machine and under any load) rather than by
// time, so the answer is the same on every run and for any number of threads. A
// watchdog's wall-clock limit only guards against a query that never reaches it.
#pragma once

#include <string>
#include <vector>

#include "axioms.h"

namespace taso::verify {

enum class Finding { kYes, kNo, kUnknown };

struct AxiomCheckOptions {
  // The consistency query's time limit. Its model is found in about 1 s (most of it
  // outside Z3's resource count, so no budget of that bounds it); the limit leaves room
  // for a machine several times slower under load.
  unsigned timeout_ms = 60'000;
  // Z3's resource limit of one redundancy query. The shipped axioms that follow from the
  // others are shown so within 0.6 million; 5 million leaves ample room.
  unsigned rlimit = 5'000'000;
  unsigned wall_limit_ms = 120'000;  // per redundancy query, against a query that hangs
  int jobs = 2;
};

struct AxiomCheckReport {
  Finding consistent = Finding::kUnknown;
  // Axioms the others entail, in file order. Each is entailed by all the others; two that
  // restate each other are both listed, and dropping one may make the other necessary.
  std::vector<std::string> redundant;
  std::vector<std::string> independent;  // shown not to follow from the others
  std::vector<std::string> undecided;    // neither, within the resource limit
};

AxiomCheckReport CheckAxiomSet(const AxiomSet& axioms, const AxiomCheckOptions& options);

}  // namespace taso::verify
