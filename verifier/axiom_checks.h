// Checks of the axiom set itself (TASO 2.4): that it is consistent (some model satisfies
// every axiom) and which axioms follow from the others (redundant ones), each query with
// a time limit.
#pragma once

#include <string>
#include <vector>

#include "axioms.h"

namespace taso::verify {

enum class Finding { kYes, kNo, kUnknown };

struct AxiomCheckReport {
  Finding consistent = Finding::kUnknown;
  std::vector<std::string> redundant;  // axioms the others entail (others: not shown to)
};

AxiomCheckReport CheckAxiomSet(const AxiomSet& axioms, unsigned timeout_ms, int jobs);

}  // namespace taso::verify
