// Polynomial forms of symbolic kernel results: the same polynomial written in another
// order has one form; anything else, or a form past the limits, is left to Z3.
#include <catch2/catch.hpp>

#include <vector>

#include "sym_polynomial.h"
#include "taso/ir/symbolic.h"

using namespace taso;
using taso::verify::PolynomialForms;

namespace {

struct Variables {
  Variables() { SymArena::Current().Reset(); }
  Sym operator[](int i) const { return SymArena::Current().Variable(i); }
};

Sym Constant(int64_t num, int64_t den = 1) { return SymArena::Current().Constant(num, den); }

}  // namespace

TEST_CASE("Sums and products in another order have one polynomial form") {
  Variables v;
  const Sym x = v[0], y = v[1], z = v[2];
  PolynomialForms forms;
  CHECK(forms.SameForm((x + y) * z, z * y + x * z));
  CHECK(forms.SameForm(x * y * x, x * (x * y)));
  CHECK(forms.SameForm(x / Constant(2), Constant(1, 2) * x));
  CHECK(forms.SameForm((x + y) - y, x));
  CHECK(forms.SameForm(x * Constant(3) + x * Constant(-3), Constant(0)));
  CHECK_FALSE(forms.SameForm(x + y, x + z));
  CHECK_FALSE(forms.SameForm(x * y, x + y));
  CHECK_FALSE(forms.SameForm(x * x, x));
}

TEST_CASE("Nodes that are not polynomials are atoms named by their operands' forms") {
  Variables v;
  const Sym x = v[0], y = v[1], z = v[2];
  SymArena& arena = SymArena::Current();
  PolynomialForms forms;
  CHECK(forms.SameForm(arena.Max(x + y, z), arena.Max(z, y + x)));
  CHECK(forms.SameForm(arena.Max(Constant(0), x) * Constant(2), Constant(2) * arena.Max(Constant(0), x)));
  CHECK(forms.SameForm(arena.Apply("tanh", x * y), arena.Apply("tanh", y * x)));
  CHECK(forms.SameForm(x / (y + z), x / (z + y)));
  CHECK_FALSE(forms.SameForm(arena.Apply("tanh", x), arena.Apply("sigmoid", x)));
  CHECK_FALSE(forms.SameForm(arena.Max(x, y), arena.Max(x, z)));
  CHECK_FALSE(forms.SameForm(x / y, y / x));
  // Equal, but not as polynomials over atoms: left to Z3.
  CHECK_FALSE(forms.SameForm(arena.Max(x, x + Constant(1)), x + Constant(1)));
}

TEST_CASE("A form past 64-bit coefficients or the term limit is no form") {
  Variables v;
  const Sym x = v[0];
  PolynomialForms forms;
  const Sym big = Constant(int64_t{1} << 40);
  CHECK(forms.SameForm(x * big, big * x));
  CHECK_FALSE(forms.SameForm((x * big) * big, (big * x) * big));  // 2^80 overflows

  auto sum_of = [&](int first, int count) {
    Sym s = Constant(0);
    for (int i = 0; i < count; ++i) s = s + v[first + i];
    return s;
  };
  const Sym a = sum_of(0, 60), b = sum_of(100, 60);  // 3,600 terms: within the limit
  CHECK(forms.SameForm(a * b, b * a));
  const Sym c = sum_of(0, 70), d = sum_of(100, 70);  // 4,900 terms: past it
  CHECK_FALSE(forms.SameForm(c * d, d * c));
}
