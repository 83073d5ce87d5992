// Symbolic kernel results (taso/ir/symbolic.h) as Z3 real terms, and whether two symbolic
// tensors are equal for every value of their variables.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <z3++.h>

#include "axiom_checks.h"
#include "taso/ir/symbolic.h"
#include "taso/ir/tensor.h"
#include "watchdog.h"

namespace taso::verify {

// Translates nodes of the calling thread's arena into `ctx`, memoized; max is an
// if-then-else, the named functions (sigmoid, tanh, ...) are uninterpreted.
class SymToZ3 {
 public:
  explicit SymToZ3(z3::context& ctx) : ctx_(ctx) {}
  z3::expr Translate(Sym s);

 private:
  z3::context& ctx_;
  std::vector<std::optional<z3::expr>> memo_;
};

struct Equality {
  Finding equal = Finding::kUnknown;
  std::string detail;          // where they differ
  uint64_t max_resources = 0;  // Z3's resource count of the costliest element's query
};

// Elements of the same polynomial form (sym_polynomial.h), or whose difference Z3 simplifies
// to zero, are equal outright; each other distinct pair of elements is one query within `budget`, checked under
// `watchdog` from its `slot`.
Equality EqualForAllValues(z3::context& ctx, const Tensor<Sym>& a, const Tensor<Sym>& b, const QueryBudget& budget,
                           Z3Watchdog& watchdog, int slot);

}  // namespace taso::verify
