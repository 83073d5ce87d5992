#include "axiom_validation.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>

#include <z3++.h>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "encode.h"
#include "sym_to_z3.h"
#include "taso/ir/op_variants.h"
#include "taso/ir/parallel.h"
#include "taso/ir/status_macros.h"

namespace taso::verify {
namespace {

// One operator variant standing for a signature function: the variant, which of its
// outputs, and the integers its parameters are written as.
struct Implementation {
  const OpVariant* variant = nullptr;
  int output = 0;
  std::vector<int64_t> codes;
};
using FunctionTable = absl::flat_hash_map<std::string, std::vector<Implementation>>;

// The integer each named constant of the signature (SAME, RELU...) stands for.
absl::StatusOr<int64_t> ConstantValue(const AxiomSet& axioms, const std::string& name) {
  z3::context ctx;
  try {
    z3::expr_vector v = ctx.parse_string(
        absl::StrCat(axioms.signature, "(declare-const probe Int)(assert (= probe ", name, "))").c_str());
    z3::expr value = v[v.size() - 1].arg(1).simplify();
    if (value.is_numeral()) return value.get_numeral_int64();
  } catch (const z3::exception& e) {
  }
  return absl::InvalidArgumentError(absl::StrCat("the signature defines no integer ", name));
}

absl::StatusOr<FunctionTable> BuildTable(const AxiomSet& axioms, const std::vector<OpVariant>& variants) {
  FunctionTable table;
  std::map<std::string, int64_t> constant_values;
  for (const OpVariant& v : variants) {
    const int outputs = v.spec.split_at_concat ? 2 : 1;
    auto form = v.op->rule_form().Smt(v.spec.params, v.spec.arity, outputs);
    if (!form.ok()) continue;
    std::vector<int64_t> codes;
    for (const auto& [name, value] : form->params) {
      std::set<std::string> constants;
      ASSIGN_OR_RETURN(std::string arg, SmtArgument(name, value, &constants));
      int64_t code;
      if (!absl::SimpleAtoi(arg, &code)) {
        if (!constant_values.count(arg)) {
          ASSIGN_OR_RETURN(constant_values[arg], ConstantValue(axioms, arg));
        }
        code = constant_values[arg];
      }
      codes.push_back(code);
    }
    for (int k = 0; k < outputs; ++k) table[form->functions[k]].push_back({&v, k, codes});
  }
  return table;
}

// An axiom's term, children before parents.
struct Term {
  enum Kind { kTensor, kInt, kLiteral, kApply } kind = kApply;
  int var = -1;  // kTensor, kInt: the quantified variable (declaration order)
  int64_t literal = 0;
  std::string function;
  std::vector<int> args;
  int last_tensor = -1;  // kApply: the latest-assigned tensor variable it depends on
};

struct ParsedAxiom {
  std::vector<std::string> var_names;
  std::vector<bool> var_is_tensor;
  std::vector<Term> terms;
  int lhs = -1, rhs = -1;
};

absl::StatusOr<ParsedAxiom> ParseAxiom(z3::context& ctx, const AxiomSet& axioms, const Axiom& axiom) {
  z3::expr_vector parsed = ctx.parse_string((axioms.signature + axiom.text).c_str());
  z3::expr e = parsed[parsed.size() - 1];
  ParsedAxiom a;
  if (!e.is_quantifier() || !e.is_forall()) return absl::InvalidArgumentError("not a universally quantified equation");
  const unsigned n = Z3_get_quantifier_num_bound(ctx, e);
  for (unsigned i = 0; i < n; ++i) {
    a.var_names.push_back(z3::symbol(ctx, Z3_get_quantifier_bound_name(ctx, e, i)).str());
    a.var_is_tensor.push_back(!z3::sort(ctx, Z3_get_quantifier_bound_sort(ctx, e, i)).is_int());
  }
  z3::expr body = e.body();
  if (!body.is_app() || body.decl().decl_kind() != Z3_OP_EQ)
    return absl::InvalidArgumentError("the body is not an equation");
  absl::flat_hash_map<unsigned, int> memo;
  std::function<absl::StatusOr<int>(const z3::expr&)> walk = [&](const z3::expr& t) -> absl::StatusOr<int> {
    if (auto it = memo.find(t.id()); it != memo.end()) return it->second;
    Term term;
    if (t.is_var()) {
      term.var = static_cast<int>(n - 1 - Z3_get_index_value(ctx, t));
      term.kind = a.var_is_tensor[term.var] ? Term::kTensor : Term::kInt;
    } else if (t.is_numeral()) {
      term.kind = Term::kLiteral;
      term.literal = t.get_numeral_int64();
    } else if (t.is_app()) {
      term.function = t.decl().name().str();
      for (unsigned i = 0; i < t.num_args(); ++i) {
        ASSIGN_OR_RETURN(int child, walk(t.arg(i)));
        term.args.push_back(child);
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unexpected term ", t.to_string()));
    }
    a.terms.push_back(std::move(term));
    memo[t.id()] = static_cast<int>(a.terms.size()) - 1;
    return static_cast<int>(a.terms.size()) - 1;
  };
  ASSIGN_OR_RETURN(a.lhs, walk(body.arg(0)));
  ASSIGN_OR_RETURN(a.rhs, walk(body.arg(1)));
  return a;
}

// The concatenation history of one dimension (TASO's split tree), which a term of sort T
// carries beside its values: a concatenation of two histories, a dimension with none
// (made afresh by an operator, or forgotten by `value`), or a quantified variable's
// dimension, whose history is unknown. An axiom equating two terms of sort T must make
// the same cuts on both sides: where one side's own concatenations cut a dimension at
// other places than the other's, a split after them cuts the two apart, so the axiom,
// true of the values, lets split0 and split1 prove false equations (concatenation's
// associativity stated of tensors proves any two tensors equal). The variables' own
// histories are compared by size only: how histories pass through an operator of several
// inputs is the generator's choice (its first input's), not part of the axioms.
struct History {
  enum Kind { kConcat, kNone, kVariable } kind = kNone;
  int64_t size = 0;
  int var = -1, dim = -1;                      // kVariable
  std::shared_ptr<const History> left, right;  // kConcat
};
using HistoryPtr = std::shared_ptr<const History>;

HistoryPtr NoHistory(int64_t size) {
  auto h = std::make_shared<History>();
  h->size = size;
  return h;
}

// The same cuts: the same tree of concatenations, over parts of the same sizes.
bool SameCuts(const History& a, const History& b) {
  if (a.size != b.size || (a.kind == History::kConcat) != (b.kind == History::kConcat)) return false;
  return a.kind != History::kConcat || (SameCuts(*a.left, *b.left) && SameCuts(*a.right, *b.right));
}

std::string HistoryText(const ParsedAxiom& axiom, const History& h) {
  switch (h.kind) {
    case History::kConcat:
      return absl::StrCat("(", HistoryText(axiom, *h.left), " | ", HistoryText(axiom, *h.right), ")");
    case History::kVariable:
      return absl::StrCat(axiom.var_names[h.var], ".dim", h.dim);
    case History::kNone:
      break;
  }
  return absl::StrCat(h.size);
}

// `value` (signature.smt2): not an operator, the tensor's values with its history
// forgotten.
constexpr absl::string_view kValue = "value";
// Functions of values (sort Value, no history): the operator whose function they are
// computed as. signature.smt2 declares vconcat for concat.
absl::string_view OperatorOf(absl::string_view function) {
  return function == "vconcat" ? absl::string_view("concat") : function;
}
bool OfValues(absl::string_view function) { return OperatorOf(function) != function; }

// The value of one term at the current case: the operator with its parameters, the
// shape, and each dimension's concatenation history (where a split cuts it).
struct Evaluated {
  const Implementation* impl = nullptr;  // null for `value`
  Params params;
  std::vector<OutputType> types;
  Shape shape;
  std::vector<HistoryPtr> history;
};

class AxiomValidator {
 public:
  AxiomValidator(const ParsedAxiom& axiom, const FunctionTable& table, const ValidationOptions& options,
                 z3::context& ctx, Z3Watchdog& watchdog, int slot)
      : a_(axiom), table_(table), options_(options), ctx_(ctx), watchdog_(watchdog), slot_(slot) {}

  absl::StatusOr<AxiomValidation> Run() {
    // The order tensor variables are assigned in: first use, children first.
    order_.assign(a_.var_names.size(), -1);
    int assigned = 0;
    for (Term& t : a_.terms) {
      if (t.kind == Term::kTensor && order_[t.var] < 0) order_[t.var] = assigned++;
    }
    num_tensors_ = assigned;
    for (Term& t : a_.terms) {
      if (t.kind != Term::kApply) continue;
      for (int c : t.args) {
        const Term& child = a_.terms[c];
        const int dep = child.kind == Term::kTensor  ? order_[child.var]
                        : child.kind == Term::kApply ? child.last_tensor
                                                     : -1;
        t.last_tensor = std::max(t.last_tensor, dep);
      }
      if (t.function != kValue && !table_.contains(OperatorOf(t.function)))
        return absl::InvalidArgumentError(absl::StrCat("function ", t.function, " stands for no operator"));
    }
    RETURN_IF_ERROR(IntDomains());
    FindValueReads();
    for (size_t i = 0; i < a_.var_names.size(); ++i) {
      if (a_.var_is_tensor[i]) continue;
      if (domains_[i].empty())
        return absl::InvalidArgumentError(
            absl::StrCat("parameter ", a_.var_names[i], " has no value every use accepts"));
    }
    for (int r : options_.ranks) AddShapes(r, Shape{});
    ints_.assign(a_.var_names.size(), 0);
    shapes_.assign(a_.var_names.size(), Shape{});
    values_.assign(a_.terms.size(), Evaluated{});
    result_.holds = Finding::kYes;
    AssignInts(0);
    if (result_.holds == Finding::kYes && result_.cases == 0) {
      result_.holds = Finding::kNo;
      result_.detail = "no parameter and shape combination defines both sides";
    }
    return result_;
  }

 private:
  // Each integer variable ranges over the codes every function it is passed to accepts.
  absl::Status IntDomains() {
    domains_.assign(a_.var_names.size(), {});
    std::vector<bool> seen(a_.var_names.size(), false);
    for (const Term& t : a_.terms) {
      if (t.kind != Term::kApply || t.function == kValue) continue;
      for (size_t j = 0; j < t.args.size(); ++j) {
        const Term& arg = a_.terms[t.args[j]];
        if (arg.kind != Term::kInt) continue;
        std::set<int64_t> accepted;
        for (const Implementation& impl : table_.at(OperatorOf(t.function)))
          if (j < impl.codes.size()) accepted.insert(impl.codes[j]);
        if (!seen[arg.var]) {
          domains_[arg.var] = accepted;
          seen[arg.var] = true;
        } else {
          std::set<int64_t> both;
          for (int64_t v : domains_[arg.var])
            if (accepted.count(v)) both.insert(v);
          domains_[arg.var] = both;
        }
      }
    }
    return absl::OkStatus();
  }

  // A tensor variable whose every use reads only its shape (the source of a constant's
  // shape) leaves its trace in the shapes of the terms that use it.
  void FindValueReads() {
    value_read_.assign(a_.var_names.size(), false);
    for (const Term& t : a_.terms) {
      if (t.kind != Term::kApply) continue;
      if (t.function == kValue) {
        if (a_.terms[t.args[0]].kind == Term::kTensor) value_read_[a_.terms[t.args[0]].var] = true;
        continue;
      }
      const GeneratorVariant& spec = table_.at(OperatorOf(t.function)).front().variant->spec;
      int position = 0;
      for (int c : t.args) {
        const Term& arg = a_.terms[c];
        if (arg.kind == Term::kInt || arg.kind == Term::kLiteral) continue;
        if (arg.kind == Term::kTensor && !(spec.shape_only_inputs & (1u << position))) value_read_[arg.var] = true;
        ++position;
      }
    }
  }

  // What decides a case's computation: the parameters, the shapes of the variables read
  // for their values and of every term. Cases that differ only elsewhere (the shape of
  // a constant's shape source beyond what the constant takes from it) are one.
  std::string CaseKey() const {
    std::string key = absl::StrJoin(ints_, ",");
    for (size_t i = 0; i < a_.var_names.size(); ++i)
      if (a_.var_is_tensor[i] && value_read_[i]) absl::StrAppend(&key, ";", ShapeToString(shapes_[i]));
    for (size_t t = 0; t < a_.terms.size(); ++t)
      if (a_.terms[t].kind == Term::kApply) absl::StrAppend(&key, ";", ShapeToString(values_[t].shape));
    return key;
  }

  void AddShapes(int rank, Shape prefix) {
    if (static_cast<int>(prefix.size()) == rank) {
      shape_choices_.push_back(prefix);
      return;
    }
    for (int64_t d : options_.dims) {
      Shape s = prefix;
      s.push_back(d);
      AddShapes(rank, s);
    }
  }

  bool Stop() const { return result_.holds != Finding::kYes; }

  void AssignInts(size_t i) {
    if (Stop()) return;
    if (i == a_.var_names.size()) return AssignTensor(0);
    if (a_.var_is_tensor[i]) return AssignInts(i + 1);
    for (int64_t v : domains_[i]) {
      ints_[i] = v;
      AssignInts(i + 1);
      if (Stop()) return;
    }
  }

  // Assigns the k-th tensor variable every shape, skipping at once any assignment under
  // which a term that is now complete has no type.
  void AssignTensor(int k) {
    if (Stop()) return;
    if (k == num_tensors_) return CheckCase();
    int var = 0;
    while (a_.var_is_tensor[var] == false || order_[var] != k) ++var;
    for (const Shape& s : shape_choices_) {
      shapes_[var] = s;
      bool defined = true;
      for (size_t t = 0; t < a_.terms.size() && defined; ++t)
        if (a_.terms[t].kind == Term::kApply && a_.terms[t].last_tensor == k) defined = Infer(static_cast<int>(t));
      if (defined) AssignTensor(k + 1);
      if (Stop()) return;
    }
  }

  int64_t IntArg(const Term& t) const { return t.kind == Term::kLiteral ? t.literal : ints_[t.var]; }

  bool Infer(int index) {
    const Term& t = a_.terms[index];
    Evaluated& out = values_[index];
    std::vector<int64_t> codes;
    std::vector<int> tensors;
    for (int c : t.args) {
      const Term& arg = a_.terms[c];
      if (arg.kind == Term::kInt || arg.kind == Term::kLiteral)
        codes.push_back(IntArg(arg));
      else
        tensors.push_back(c);
    }
    out.impl = nullptr;
    if (t.function == kValue) {
      if (tensors.size() != 1) return false;
      out.shape = ShapeOf(tensors[0]);
      out.history.clear();
      for (int64_t d : out.shape) out.history.push_back(NoHistory(d));
      return true;
    }
    // The first variant with these parameters: later ones may narrow the shapes they take
    // (Concat's bias variant reads vectors only), while an axiom is about any shapes.
    for (const Implementation& impl : table_.at(OperatorOf(t.function)))
      if (impl.codes == codes) {
        out.impl = &impl;
        break;
      }
    if (!out.impl) return false;
    const GeneratorVariant& spec = out.impl->variant->spec;
    std::vector<Shape> shapes;
    for (int c : tensors) shapes.push_back(ShapeOf(c));
    if (!spec.AcceptsShapes(shapes)) return false;
    std::vector<InputInfo> infos;
    for (const Shape& shape : shapes) infos.push_back({true, DataType::kFloat32, shape});
    out.params = spec.params;
    if (spec.split_at_concat) {
      const int axis = CutAxis(spec);
      const std::vector<HistoryPtr> history = HistoryOf(tensors[0]);
      if (axis < 0 || axis >= static_cast<int>(history.size()) || history[axis]->kind != History::kConcat) return false;
      out.params = WithCut(spec, history[axis]->left->size, history[axis]->right->size);
    }
    auto types = out.impl->variant->op->semantics().InferTypes(out.params, infos);
    if (!types.ok() || out.impl->output >= static_cast<int>(types->size())) return false;
    out.types = *types;
    out.shape = (*types)[out.impl->output].shape;
    const DimSources sources = out.impl->variant->op->rule_form().DimensionSources(out.params, infos, *types);
    out.history.clear();
    for (size_t d = 0; d < out.shape.size(); ++d) {
      const DimSource& src = sources[out.impl->output][d];
      HistoryPtr h = NoHistory(out.shape[d]);
      if (src.kind == DimSource::kCopy || src.kind == DimSource::kSplitPart) {
        const std::vector<HistoryPtr> from = HistoryOf(tensors[src.input]);
        if (src.dim < static_cast<int>(from.size())) h = from[src.dim];
        if (src.kind == DimSource::kSplitPart) {
          if (h->kind != History::kConcat) return false;
          h = out.impl->output == 0 ? h->left : h->right;
        }
      } else if (src.kind == DimSource::kConcat) {
        const std::vector<HistoryPtr> first = HistoryOf(tensors[0]), second = HistoryOf(tensors[1]);
        if (src.dim < static_cast<int>(std::min(first.size(), second.size()))) {
          auto node = std::make_shared<History>();
          node->kind = History::kConcat;
          node->left = first[src.dim];
          node->right = second[src.dim];
          node->size = node->left->size + node->right->size;
          h = node;
        }
      }
      // A source that does not fit its shape, or a value, which has no history.
      if (h->size != out.shape[d] || OfValues(t.function)) h = NoHistory(out.shape[d]);
      out.history.push_back(std::move(h));
    }
    return true;
  }

  const Shape& ShapeOf(int term) const {
    const Term& t = a_.terms[term];
    return t.kind == Term::kTensor ? shapes_[t.var] : values_[term].shape;
  }
  std::vector<HistoryPtr> HistoryOf(int term) const {
    const Term& t = a_.terms[term];
    if (t.kind != Term::kTensor) return values_[term].history;
    std::vector<HistoryPtr> out;
    for (size_t d = 0; d < shapes_[t.var].size(); ++d) {
      auto h = std::make_shared<History>();
      h->kind = History::kVariable;
      h->size = shapes_[t.var][d];
      h->var = t.var;
      h->dim = static_cast<int>(d);
      out.push_back(std::move(h));
    }
    return out;
  }

  std::string CaseText() const {
    std::vector<std::string> parts;
    for (size_t i = 0; i < a_.var_names.size(); ++i)
      parts.push_back(a_.var_is_tensor[i] ? absl::StrCat(a_.var_names[i], ShapeToString(shapes_[i]))
                                          : absl::StrCat(a_.var_names[i], "=", ints_[i]));
    return absl::StrJoin(parts, " ");
  }

  // Both sides are defined: compute them with the kernels on symbolic inputs and compare.
  void CheckCase() {
    if (!seen_.insert(CaseKey()).second) return;
    ++result_.cases;
    SymArena& arena = SymArena::Current();
    arena.Reset();
    std::vector<Tensor<Sym>> tensors(a_.terms.size());
    int32_t next_var = 0;
    for (size_t t = 0; t < a_.terms.size(); ++t) {
      const Term& term = a_.terms[t];
      if (term.kind == Term::kTensor) {
        tensors[t] = Tensor<Sym>(shapes_[term.var]);
        for (Sym& s : tensors[t].data) s = arena.Variable(next_var++);
        continue;
      }
      if (term.kind != Term::kApply) continue;
      const Evaluated& v = values_[t];
      if (term.function == kValue) {
        tensors[t] = tensors[term.args[0]];
        continue;
      }
      KernelArgs<Sym> args;
      for (int c : term.args)
        if (a_.terms[c].kind == Term::kTensor || a_.terms[c].kind == Term::kApply) {
          args.in.push_back(&tensors[c]);
          args.constant.push_back(nullptr);
        }
      std::vector<Tensor<Sym>> outs;
      for (const OutputType& o : v.types) outs.emplace_back(o.shape);
      for (Tensor<Sym>& o : outs) args.out.push_back(&o);
      absl::Status s = v.impl->variant->op->semantics().RunSymbolic(v.params, args);
      if (!s.ok()) {
        result_.holds = Finding::kUnknown;
        result_.detail = absl::StrCat("at ", CaseText(), ": ", s.message());
        return;
      }
      tensors[t] = std::move(outs[v.impl->output]);
    }
    Equality eq = EqualForAllValues(ctx_, tensors[a_.lhs], tensors[a_.rhs], options_.budget, watchdog_, slot_);
    result_.max_resources = std::max(result_.max_resources, eq.max_resources);
    if (eq.equal != Finding::kYes) {
      result_.holds = eq.equal;
      result_.detail = absl::StrCat("at ", CaseText(), ": ", eq.detail);
      return;
    }
    // Equal values; as tensors of sort T, the two sides must be cut at the same places
    // too: a split after them would otherwise cut them apart.
    const std::vector<HistoryPtr> lhs = HistoryOf(a_.lhs), rhs = HistoryOf(a_.rhs);
    for (size_t d = 0; d < lhs.size() && d < rhs.size(); ++d) {
      if (SameCuts(*lhs[d], *rhs[d])) continue;
      result_.holds = Finding::kNo;
      result_.detail = absl::StrCat("at ", CaseText(), ": the values agree, but dimension ", d, " is concatenated as ",
                                    HistoryText(a_, *lhs[d]), " against ", HistoryText(a_, *rhs[d]),
                                    " (a split after them would cut them apart)");
      return;
    }
  }

  ParsedAxiom a_;
  const FunctionTable& table_;
  const ValidationOptions& options_;
  z3::context& ctx_;
  Z3Watchdog& watchdog_;
  int slot_;
  std::vector<int> order_;
  int num_tensors_ = 0;
  std::vector<std::set<int64_t>> domains_;
  std::vector<Shape> shape_choices_;
  std::vector<int64_t> ints_;
  std::vector<Shape> shapes_;
  std::vector<Evaluated> values_;
  std::vector<bool> value_read_;
  absl::flat_hash_set<std::string> seen_;
  AxiomValidation result_;
};

ValidationOptions Wider(ValidationOptions options) {
  options.dims = options.wider_dims;
  return options;
}

}  // namespace

absl::StatusOr<std::vector<AxiomValidation>> ValidateAxioms(const AxiomSet& axioms, const ValidationOptions& options) {
  const std::vector<OpVariant> variants = AllOperatorVariants();
  ASSIGN_OR_RETURN(FunctionTable table, BuildTable(axioms, variants));
  const size_t n = axioms.axioms.size();
  std::vector<AxiomValidation> results(n);
  std::vector<absl::Status> errors(n);
  const int jobs = std::max(1, options.jobs);
  Z3Watchdog watchdog(jobs);
  ParallelForThreads(n, jobs, [&](int thread, size_t i) {
    const Axiom& axiom = axioms.axioms[i];
    const auto start = std::chrono::steady_clock::now();
    z3::context ctx;
    auto parsed = ParseAxiom(ctx, axioms, axiom);
    absl::StatusOr<AxiomValidation> r =
        parsed.ok() ? AxiomValidator(*parsed, table, options, ctx, watchdog, thread).Run() : parsed.status();
    if (r.ok() && r->cases == 0) r = AxiomValidator(*parsed, table, Wider(options), ctx, watchdog, thread).Run();
    if (!r.ok()) {
      errors[i] = absl::InvalidArgumentError(
          absl::StrCat(axiom.file, ":", axiom.line, ": axiom ", axiom.name, ": ", r.status().message()));
      return;
    }
    results[i] = *r;
    results[i].axiom = axiom.name;
    results[i].seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
  for (const absl::Status& e : errors) RETURN_IF_ERROR(e);
  return results;
}

}  // namespace taso::verify
