// Symbolic kernel results (taso/ir/symbolic.h) in a canonical polynomial form, so that most
// equal elements are told equal without a solver: the axioms' two sides are usually the same
// polynomial written in another order (a convolution of a sum against the sum of two
// convolutions), which Z3's simplifier would otherwise normalize element by element.
//
// A form is a sum of monomials with rational coefficients over atoms: the variables, and each
// node that is not a polynomial (max, a quotient by a non-constant, a named function, the
// lowest value) identified by its kind and the forms of its operands. Equal forms are equal
// for every value of the variables; different forms prove nothing (max(x, y) >= x is not
// seen), so the caller asks Z3 about them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "taso/ir/symbolic.h"

namespace taso::verify {

class PolynomialForms {
 public:
  // Whether `a` and `b`, nodes of the calling thread's arena, have the same form. False also
  // where a coefficient overflows 64 bits or a form would pass kMaxTerms terms. Valid until
  // the arena is reset: one PolynomialForms per arena generation.
  bool SameForm(Sym a, Sym b);

  static constexpr size_t kMaxTerms = 4096;

 private:
  struct Rational {
    int64_t num = 0, den = 1;  // den > 0, in lowest terms
    friend bool operator==(const Rational&, const Rational&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const Rational& r) {
      return H::combine(std::move(h), r.num, r.den);
    }
  };
  using Monomial = absl::InlinedVector<int32_t, 4>;  // atom ids, sorted; powers repeat
  struct Term {
    Monomial monomial;
    Rational coefficient;
    friend bool operator==(const Term&, const Term&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const Term& t) {
      return H::combine(std::move(h), t.monomial, t.coefficient);
    }
  };
  using Polynomial = std::vector<Term>;                            // canonical: sorted by monomial, no zero coefficient
  using AtomKey = std::tuple<int, std::string, int32_t, int32_t>;  // kind, function, operand forms

  std::optional<Polynomial> Form(int32_t node);
  bool Expand(int32_t node, const Rational& coefficient, const Monomial& factor, Polynomial& terms);
  std::optional<int32_t> AtomOf(int32_t node);
  std::optional<int32_t> FormId(int32_t node);

  std::vector<std::optional<int32_t>> atom_of_node_;  // memo of AtomOf, by node id
  absl::flat_hash_map<AtomKey, int32_t> atom_ids_;
  absl::flat_hash_map<Polynomial, int32_t> form_ids_;  // the forms of atoms' operands
};

}  // namespace taso::verify
