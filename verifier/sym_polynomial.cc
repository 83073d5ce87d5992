#include "sym_polynomial.h"

#include <algorithm>
#include <iterator>

namespace taso::verify {
namespace {

__int128 Abs(__int128 v) { return v < 0 ? -v : v; }

__int128 Gcd(__int128 a, __int128 b) {
  while (b != 0) a = std::exchange(b, a % b);
  return a;
}

// num / den in lowest terms with a positive denominator, if both fit in 64 bits.
template <typename Rational>
std::optional<Rational> Reduced(__int128 num, __int128 den) {
  if (den < 0) num = -num, den = -den;
  const __int128 g = Gcd(Abs(num), den);
  if (g > 1) num /= g, den /= g;
  const __int128 lo = INT64_MIN, hi = INT64_MAX;
  if (num < lo || num > hi || den > hi) return std::nullopt;
  return Rational{static_cast<int64_t>(num), static_cast<int64_t>(den)};
}

template <typename Rational>
std::optional<Rational> Times(const Rational& x, const Rational& y) {
  return Reduced<Rational>(static_cast<__int128>(x.num) * y.num, static_cast<__int128>(x.den) * y.den);
}

template <typename Rational>
std::optional<Rational> Plus(const Rational& x, const Rational& y) {
  return Reduced<Rational>(static_cast<__int128>(x.num) * y.den + static_cast<__int128>(y.num) * x.den,
                           static_cast<__int128>(x.den) * y.den);
}

}  // namespace

bool PolynomialForms::SameForm(Sym a, Sym b) {
  const std::optional<Polynomial> x = Form(a.id);
  if (!x) return false;
  const std::optional<Polynomial> y = Form(b.id);
  return y && *x == *y;
}

// The node's terms, sorted by monomial with like terms added up.
std::optional<PolynomialForms::Polynomial> PolynomialForms::Form(int32_t node) {
  Polynomial terms;
  if (!Expand(node, Rational{1, 1}, {}, terms)) return std::nullopt;
  std::sort(terms.begin(), terms.end(), [](const Term& u, const Term& v) { return u.monomial < v.monomial; });
  Polynomial form;
  for (Term& term : terms) {
    if (form.empty() || form.back().monomial != term.monomial) {
      if (!form.empty() && form.back().coefficient.num == 0) form.pop_back();
      form.push_back(std::move(term));
      continue;
    }
    const std::optional<Rational> sum = Plus(form.back().coefficient, term.coefficient);
    if (!sum) return std::nullopt;
    form.back().coefficient = *sum;
  }
  if (!form.empty() && form.back().coefficient.num == 0) form.pop_back();
  if (form.size() > kMaxTerms) return std::nullopt;
  return form;
}

// Appends the terms of `coefficient` * `factor` * node to `terms`, uncombined: a sum's
// operands are expanded in place, so a reduction of n products costs n terms, not n^2.
bool PolynomialForms::Expand(int32_t node, const Rational& coefficient, const Monomial& factor, Polynomial& terms) {
  if (terms.size() > 4 * kMaxTerms) return false;
  const SymNode& n = SymArena::Current().node(Sym{node});
  switch (n.kind) {
    case SymNode::kConst: {
      if (n.num == 0) return true;
      const std::optional<Rational> c = Times(coefficient, Rational{n.num, n.den});
      if (!c) return false;
      terms.push_back({factor, *c});
      return true;
    }
    case SymNode::kAdd:
      return Expand(n.a, coefficient, factor, terms) && Expand(n.b, coefficient, factor, terms);
    case SymNode::kMul: {
      const std::optional<Polynomial> left = Form(n.a);
      if (!left) return false;
      for (const Term& t : *left) {
        const std::optional<Rational> c = Times(coefficient, t.coefficient);
        if (!c) return false;
        Monomial product;
        std::merge(factor.begin(), factor.end(), t.monomial.begin(), t.monomial.end(), std::back_inserter(product));
        if (!Expand(n.b, *c, product, terms)) return false;
      }
      return true;
    }
    case SymNode::kDiv: {
      const std::optional<Polynomial> d = Form(n.b);
      if (!d) return false;
      if (d->size() == 1 && d->front().monomial.empty()) {
        const Rational& c = d->front().coefficient;  // non-zero: zero terms are dropped
        const std::optional<Rational> inverse = Reduced<Rational>(c.den, c.num);
        const std::optional<Rational> divided = inverse ? Times(coefficient, *inverse) : std::nullopt;
        return divided && Expand(n.a, *divided, factor, terms);
      }
      break;
    }
    default:
      break;
  }
  const std::optional<int32_t> atom = AtomOf(node);
  if (!atom) return false;
  Monomial with_atom = factor;
  with_atom.insert(std::upper_bound(with_atom.begin(), with_atom.end(), *atom), *atom);
  terms.push_back({std::move(with_atom), coefficient});
  return true;
}

// A variable or a node that is not a polynomial, identified by its operands' forms.
std::optional<int32_t> PolynomialForms::AtomOf(int32_t node) {
  if (atom_of_node_.size() <= static_cast<size_t>(node)) atom_of_node_.resize(SymArena::Current().size());
  if (atom_of_node_[node]) return atom_of_node_[node];
  const SymNode& n = SymArena::Current().node(Sym{node});
  std::optional<int32_t> a = -1, b = -1;
  if (n.kind == SymNode::kMax || n.kind == SymNode::kDiv || n.kind == SymNode::kApply) {
    a = FormId(n.a);
    if (n.b >= 0) b = FormId(n.b);
    if (!a || !b) return std::nullopt;
  }
  AtomKey key{n.kind, "", *a, *b};
  if (n.kind == SymNode::kVar) std::get<2>(key) = n.a;
  if (n.kind == SymNode::kMax) key = {n.kind, "", std::min(*a, *b), std::max(*a, *b)};
  if (n.kind == SymNode::kApply) std::get<1>(key) = n.function;
  const int32_t atom = atom_ids_.try_emplace(std::move(key), static_cast<int32_t>(atom_ids_.size())).first->second;
  atom_of_node_[node] = atom;
  return atom;
}

std::optional<int32_t> PolynomialForms::FormId(int32_t node) {
  std::optional<Polynomial> form = Form(node);
  if (!form) return std::nullopt;
  return form_ids_.try_emplace(*std::move(form), static_cast<int32_t>(form_ids_.size())).first->second;
}

}  // namespace taso::verify
