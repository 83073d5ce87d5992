#include "taso/ir/symbolic.h"

#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace taso {
namespace {

bool IsConst(const SymNode& n) { return n.kind == SymNode::kConst; }

// Overflow-checked rational arithmetic; on overflow the caller keeps the node symbolic.
bool Normalize(__int128 num, __int128 den, int64_t* n, int64_t* d) {
  if (den == 0) return false;
  if (den < 0) num = -num, den = -den;
  __int128 a = num < 0 ? -num : num, b = den;
  while (b != 0) {
    __int128 t = a % b;
    a = b;
    b = t;
  }
  if (a > 1) num /= a, den /= a;
  if (num > INT64_MAX || num < INT64_MIN || den > INT64_MAX) return false;
  *n = static_cast<int64_t>(num);
  *d = static_cast<int64_t>(den);
  return true;
}

}  // namespace

SymArena& SymArena::Current() {
  thread_local SymArena arena;
  if (arena.nodes_.empty()) arena.Reset();
  return arena;
}

void SymArena::Reset() {
  nodes_.clear();
  error_.clear();
  nodes_.push_back(SymNode{SymNode::kConst, 0, 1});
  nodes_.push_back(SymNode{SymNode::kConst, 1, 1});
}

Sym SymArena::Push(SymNode n) {
  nodes_.push_back(n);
  return Sym{static_cast<int32_t>(nodes_.size() - 1)};
}

Sym SymArena::Constant(int64_t num, int64_t den) {
  int64_t n, d;
  if (!Normalize(num, den, &n, &d)) {
    Fail(absl::StrCat("constant ", num, "/", den, " is not a rational number"));
    return Sym{0};
  }
  if (d == 1 && (n == 0 || n == 1)) return Sym{static_cast<int32_t>(n)};
  return Push(SymNode{SymNode::kConst, n, d});
}

Sym SymArena::Variable(int32_t index) { return Push(SymNode{SymNode::kVar, 0, 1, index}); }

Sym SymArena::Add(Sym x, Sym y) {
  const SymNode &a = nodes_[x.id], &b = nodes_[y.id];
  if (IsConst(a) && a.num == 0) return y;
  if (IsConst(b) && b.num == 0) return x;
  if (IsConst(a) && IsConst(b)) {
    int64_t n, d;
    if (Normalize(static_cast<__int128>(a.num) * b.den + static_cast<__int128>(b.num) * a.den,
                  static_cast<__int128>(a.den) * b.den, &n, &d))
      return Constant(n, d);
  }
  return Push(SymNode{SymNode::kAdd, 0, 1, x.id, y.id});
}

Sym SymArena::Mul(Sym x, Sym y) {
  const SymNode &a = nodes_[x.id], &b = nodes_[y.id];
  if ((IsConst(a) && a.num == 0) || (IsConst(b) && b.num == 0)) return Sym{0};
  if (IsConst(a) && a.num == 1 && a.den == 1) return y;
  if (IsConst(b) && b.num == 1 && b.den == 1) return x;
  if (IsConst(a) && IsConst(b)) {
    int64_t n, d;
    if (Normalize(static_cast<__int128>(a.num) * b.num, static_cast<__int128>(a.den) * b.den, &n, &d))
      return Constant(n, d);
  }
  return Push(SymNode{SymNode::kMul, 0, 1, x.id, y.id});
}

Sym SymArena::Div(Sym x, Sym y) {
  const SymNode& b = nodes_[y.id];
  if (IsConst(b) && b.num != 0) return Mul(x, Constant(b.den, b.num));
  return Push(SymNode{SymNode::kDiv, 0, 1, x.id, y.id});
}

Sym SymArena::Max(Sym x, Sym y) {
  // The identity of max pooling's accumulator: max(lowest, v) = v.
  if (nodes_[x.id].kind == SymNode::kLowest) return y;
  if (nodes_[y.id].kind == SymNode::kLowest) return x;
  if (x.id == y.id) return x;
  return Push(SymNode{SymNode::kMax, 0, 1, x.id, y.id});
}

Sym SymArena::Apply(const char* function, Sym x, Sym y) {
  SymNode n{SymNode::kApply, 0, 1, x.id, y.id};
  n.function = function;
  return Push(n);
}

Sym SymArena::Lowest() { return Push(SymNode{SymNode::kLowest}); }

Sym Domain<Sym>::FromDouble(double d) {
  // Exact for the values kernels use (integers and binary fractions such as 1e-5's float).
  int exponent = 0;
  const double mantissa = std::frexp(d, &exponent);
  const int64_t scaled = static_cast<int64_t>(std::ldexp(mantissa, 53));
  const int shift = exponent - 53;
  auto& arena = SymArena::Current();
  if (shift >= 0 && shift < 10) return arena.Constant(scaled * (int64_t{1} << shift));
  if (shift < 0 && shift > -62) return arena.Constant(scaled, int64_t{1} << -shift);
  arena.Fail(absl::StrCat("constant ", d, " is out of the symbolic domain's range"));
  return Sym{0};
}

bool Domain<Sym>::Greater(Sym a, Sym b) {
  auto& arena = SymArena::Current();
  const SymNode &x = arena.node(a), &y = arena.node(b);
  if (IsConst(x) && IsConst(y)) return static_cast<__int128>(x.num) * y.den > static_cast<__int128>(y.num) * x.den;
  arena.Fail("an order comparison of symbolic values");
  return false;
}

}  // namespace taso
