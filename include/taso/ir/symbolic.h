// The symbolic scalar domain: the reference kernels run on expressions instead of numbers,
// so the verifier can check the axioms against them in real arithmetic (TASO 2.4).
//
// A Sym is a handle to a node of a per-thread expression arena: rational constants,
// variables, sums, products, quotients, max (relu is max(0, x)), and the other non-linear
// activations as uninterpreted functions. Constants fold as the expressions are built, so zero padding
// and identity kernels leave no trace. The verifier turns the nodes into Z3 terms.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "taso/ir/scalar_domain.h"

namespace taso {

struct SymNode {
  enum Kind : uint8_t { kConst, kVar, kAdd, kMul, kDiv, kMax, kApply, kLowest } kind = kConst;
  int64_t num = 0, den = 1;        // kConst: num / den, den > 0, in lowest terms
  int32_t a = -1, b = -1;          // operands; kVar: its index; kApply: the argument(s)
  const char* function = nullptr;  // kApply: "sigmoid", "tanh", ...
};

struct Sym {
  int32_t id = 0;  // node 0 is the constant 0, node 1 the constant 1
};

// The arena of the calling thread. Reset() starts a fresh expression set; handles made
// before it are invalid afterwards.
class SymArena {
 public:
  static SymArena& Current();
  void Reset();
  const SymNode& node(Sym s) const { return nodes_[s.id]; }
  size_t size() const { return nodes_.size(); }

  Sym Constant(int64_t num, int64_t den = 1);
  Sym Variable(int32_t index);
  Sym Add(Sym x, Sym y);
  Sym Mul(Sym x, Sym y);
  Sym Div(Sym x, Sym y);
  Sym Max(Sym x, Sym y);
  Sym Apply(const char* function, Sym x, Sym y = Sym{-1});
  Sym Lowest();

  // Set when a kernel asked for something expressions cannot give (an order comparison
  // of non-constant values, a constant that is not a rational); cleared by Reset().
  const std::string& error() const { return error_; }
  void Fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
  }

 private:
  Sym Push(SymNode n);
  std::vector<SymNode> nodes_;
  std::string error_;
};

inline Sym operator+(Sym x, Sym y) { return SymArena::Current().Add(x, y); }
inline Sym operator*(Sym x, Sym y) { return SymArena::Current().Mul(x, y); }
inline Sym operator-(Sym x) { return SymArena::Current().Mul(SymArena::Current().Constant(-1), x); }
inline Sym operator-(Sym x, Sym y) { return x + (-y); }
inline Sym operator/(Sym x, Sym y) { return SymArena::Current().Div(x, y); }
inline Sym& operator+=(Sym& x, Sym y) { return x = x + y; }
inline Sym& operator-=(Sym& x, Sym y) { return x = x - y; }
inline Sym& operator*=(Sym& x, Sym y) { return x = x * y; }
inline Sym& operator/=(Sym& x, Sym y) { return x = x / y; }

template <>
struct Domain<Sym> {
  static Sym Zero() { return Sym{0}; }
  static Sym One() { return Sym{1}; }
  static Sym Lowest() { return SymArena::Current().Lowest(); }
  static Sym FromDouble(double d);
  static Sym InverseCount(int64_t n) { return SymArena::Current().Constant(1, n); }
  static bool Greater(Sym a, Sym b);
  static Sym Max(Sym a, Sym b) { return SymArena::Current().Max(a, b); }
  static Sym Relu(Sym x) { return SymArena::Current().Max(Zero(), x); }  // defined, not uninterpreted
  static Sym Sigmoid(Sym x) { return SymArena::Current().Apply("sigmoid", x); }
  static Sym Tanh(Sym x) { return SymArena::Current().Apply("tanh", x); }
  static Sym Erf(Sym x) { return SymArena::Current().Apply("erf", x); }
  static Sym Sqrt(Sym x) { return SymArena::Current().Apply("sqrt", x); }
  static Sym Exp(Sym x) { return SymArena::Current().Apply("exp", x); }
  static Sym Div(Sym a, Sym b) { return a / b; }
  static Sym Pow(Sym a, Sym b) { return SymArena::Current().Apply("pow", a, b); }
};

}  // namespace taso
