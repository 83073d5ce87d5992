// Validation of the axioms against the reference kernels (TASO 2.4): every axiom is
// instantiated at every combination of parameter values and tensor shapes up to a small
// bound, both sides are computed by the operators' own kernels in the symbolic domain
// (taso/ir/symbolic.h), and Z3 decides in real arithmetic whether they are equal for all
// input values. Relu is max(0, x); the other non-linear functions are uninterpreted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "axiom_checks.h"
#include "axioms.h"
#include "watchdog.h"

namespace taso::verify {

struct ValidationOptions {
  std::vector<int64_t> dims = {1, 2, 3};  // the sizes every tensor dimension takes
  // The sizes tried instead for an axiom that no combination of `dims` defines: a
  // grouped convolution whose groups merge two at a time needs 4 groups of 2 channels,
  // kernel enlargement odd sizes.
  std::vector<int64_t> wider_dims = {1, 2, 3, 8};
  std::vector<int> ranks = {0, 1, 2, 4};  // the ranks every tensor takes
  // Each element's Z3 query: a budget of Z3's resource count (the costliest shipped case
  // uses 0.14 million, poolmax_same_valid) and a wall-clock guard for a query that stops
  // counting.
  QueryBudget budget{10'000'000, 60'000};
  int jobs = 2;
};

struct AxiomValidation {
  std::string axiom;
  Finding holds = Finding::kUnknown;  // kYes: on every case; kNo: a counterexample
  int64_t cases = 0;                  // parameter and shape combinations where both sides are defined
  std::string detail;                 // the counterexample, or why the axiom could not be checked
  double seconds = 0;
  uint64_t max_resources = 0;  // Z3's resource count of the costliest query of its cases
};

// One result per axiom, in the set's order. Fails when an axiom uses a function no
// operator variant (taso/ir/op_variants.h) stands for.
absl::StatusOr<std::vector<AxiomValidation>> ValidateAxioms(const AxiomSet& axioms, const ValidationOptions& options);

}  // namespace taso::verify
