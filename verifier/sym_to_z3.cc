#include "sym_to_z3.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "sym_polynomial.h"
#include "taso/ir/symbolic.h"

namespace taso::verify {

z3::expr SymToZ3::Translate(Sym s) {
  const SymArena& arena = SymArena::Current();
  if (memo_.size() < arena.size()) memo_.resize(arena.size());
  if (memo_[s.id]) return *memo_[s.id];
  const SymNode& n = arena.node(s);
  z3::expr e(ctx_);
  switch (n.kind) {
    case SymNode::kConst:
      e = ctx_.real_val(std::to_string(n.num).c_str()) / ctx_.real_val(std::to_string(n.den).c_str());
      break;
    case SymNode::kVar:
      e = ctx_.real_const(absl::StrCat("v", n.a).c_str());
      break;
    case SymNode::kAdd:
      e = Translate(Sym{n.a}) + Translate(Sym{n.b});
      break;
    case SymNode::kMul:
      e = Translate(Sym{n.a}) * Translate(Sym{n.b});
      break;
    case SymNode::kDiv:
      e = Translate(Sym{n.a}) / Translate(Sym{n.b});
      break;
    case SymNode::kMax: {
      z3::expr x = Translate(Sym{n.a}), y = Translate(Sym{n.b});
      e = z3::ite(x >= y, x, y);
      break;
    }
    case SymNode::kApply: {
      z3::expr x = Translate(Sym{n.a});
      if (n.b >= 0) {
        e = z3::function(n.function, ctx_.real_sort(), ctx_.real_sort(), ctx_.real_sort())(x, Translate(Sym{n.b}));
      } else {
        e = z3::function(n.function, ctx_.real_sort(), ctx_.real_sort())(x);
      }
      break;
    }
    case SymNode::kLowest:
      // Only max pooling's accumulator start; it never survives a window with an element.
      e = ctx_.real_const("lowest");
      break;
  }
  memo_[s.id] = e;
  return e;
}

Equality EqualForAllValues(z3::context& ctx, const Tensor<Sym>& a, const Tensor<Sym>& b, const QueryBudget& budget,
                           Z3Watchdog& watchdog, int slot) {
  if (a.shape != b.shape)
    return {Finding::kNo, absl::StrCat("shapes differ: ", ShapeToString(a.shape), " and ", ShapeToString(b.shape))};
  PolynomialForms forms;
  SymToZ3 to_z3(ctx);
  z3::params normal_form(ctx);
  normal_form.set("som", true);  // polynomials as sums of monomials: equal ones cancel
  normal_form.set("som_blowup", 1000000u);
  z3::expr_vector differ(ctx);
  std::vector<int64_t> indices;
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (a.data[i].id == b.data[i].id) continue;
    if (forms.SameForm(a.data[i], b.data[i])) continue;
    z3::expr x = to_z3.Translate(a.data[i]), y = to_z3.Translate(b.data[i]);
    z3::expr d = (x - y).simplify(normal_form);
    if (d.is_numeral() && std::string(Z3_get_numeral_string(ctx, d)) == "0") continue;
    indices.push_back(i);
    differ.push_back(x != y);
  }
  // One query per element: small queries are far easier than their disjunction (max
  // pooling's nested maxima), and elements often repeat the same pair of terms.
  z3::solver s(ctx);
  z3::params p(ctx);
  SetBudget(p, budget);
  s.set(p);
  absl::flat_hash_set<unsigned> checked;
  Equality out;
  for (unsigned i = 0; i < differ.size(); ++i) {
    if (!checked.insert(differ[i].id()).second) continue;
    s.push();
    s.add(differ[i]);
    const uint64_t before = ResourceCount(s);
    const z3::check_result r = watchdog.Check(slot, ctx, s, std::chrono::milliseconds(budget.timeout_ms));
    out.max_resources = std::max(out.max_resources, ResourceCount(s) - before);
    s.pop();
    if (r == z3::unsat) continue;
    out.equal = r == z3::sat ? Finding::kNo : Finding::kUnknown;
    out.detail = r == z3::sat ? absl::StrCat("values differ (element ", indices[i], ")")
                              : absl::StrCat("Z3 gave no answer within its budget of ", budget.rlimit,
                                             " resources and ", budget.timeout_ms, " ms (element ", indices[i], ")");
    return out;
  }
  out.equal = Finding::kYes;
  return out;
}

}  // namespace taso::verify
