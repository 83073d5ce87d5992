#include "rule_finder.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "canonical.h"
#include "float_check.h"
#include "parametric.h"
#include "replay.h"
#include "taso/parallel.h"
#include "taso/status_macros.h"

namespace taso::gen {
namespace {

// An input read only for its shape (a constant's source) that has the shape of another
// input the rule reads for its values stands for that one: X -> conv(X, I_conv(Y)) is
// X -> conv(X, I_conv(X)).
Candidate NormalizeShapeOnlyInputs(const OpSet& set, Candidate c) {
  const int n = static_cast<int>(set.inputs.size());
  std::vector<bool> value_use(n, false), shape_use(n, false);
  for (const GraphCode* g : {&c.a, &c.b}) {
    if (g->num_ops == 0) value_use[g->lone_input] = true;
    for (int o = 0; o < g->num_ops; ++o) {
      const auto& spec = set.variants[g->ops[o].variant].spec;
      for (int i = 0; i < spec.arity; ++i)
        if (g->ops[o].in[i] < n) ((spec.shape_only_inputs >> i) & 1 ? shape_use : value_use)[g->ops[o].in[i]] = true;
    }
  }
  for (int u = 0; u < n; ++u) {
    if (!shape_use[u] || value_use[u]) continue;
    for (int v = 0; v < n; ++v)
      if (value_use[v] && set.inputs[v].shape == set.inputs[u].shape &&
          set.inputs[v].activation == set.inputs[u].activation) {
        for (GraphCode* g : {&c.a, &c.b})
          for (int o = 0; o < g->num_ops; ++o)
            for (uint8_t& i : g->ops[o].in)
              if (i == u) i = static_cast<uint8_t>(v);
        break;
      }
  }
  return c;
}

// The shape of every tensor and whether it is an activation, from a replay.
struct Facts {
  std::vector<Shape> shapes;
  std::vector<bool> activation;
};

Facts FactsOf(const Enumerator& e, const GraphCode& code) {
  Facts f;
  auto rep = Replay<uint32_t>(e.op_set(), code, e.inputs());
  const auto& set = e.op_set();
  for (const GenInput& in : set.inputs) f.activation.push_back(in.activation);
  for (int t = 0; t < rep->num_tensors(); ++t) f.shapes.push_back(rep->tensor(t).shape);
  for (int o = 0; o < code.num_ops; ++o) {
    const int first = rep->first_output[o];
    const int end = o + 1 < code.num_ops ? rep->first_output[o + 1] : rep->num_tensors();
    const Variant& var = set.variants[code.ops[o].variant];
    bool act = false;
    for (int i = 0; i < var.spec.arity; ++i) act |= f.activation[code.ops[o].in[i]];
    for (int k = first; k < end; ++k) f.activation.push_back(act && !var.spec.constant_output);
  }
  return f;
}

// ---------------------------------------------------------------- rules

// Whether each generator input is read by either graph of the candidate.
std::vector<bool> InputsRead(const OpSet& set, const Candidate& c) {
  const int n = static_cast<int>(set.inputs.size());
  std::vector<bool> used(n, false);
  for (const GraphCode* g : {&c.a, &c.b}) {
    for (int o = 0; o < g->num_ops; ++o)
      for (int i = 0; i < set.variants[g->ops[o].variant].spec.arity; ++i)
        if (g->ops[o].in[i] < n) used[g->ops[o].in[i]] = true;
    if (g->num_ops == 0) used[g->lone_input] = true;
  }
  return used;
}

// A split's two sizes as sums of the rule's dimensions: the leaves of the concatenation
// that built its input's cut axis. `id`: rule tensor ids by replay tensor ids.
void AddCutSizes(const Variant& var, const GenOp& op, const Replayed<uint32_t>& rep, const std::vector<int>& id,
                 RuleOp& rule_op) {
  const int axis = CutAxis(var.spec);
  const DimNode& cut = rep.nodes[rep.dims[op.in[0]][axis]];
  for (int part : {cut.left, cut.right}) {
    std::vector<DimNode> leaves;
    Leaves(rep.nodes, part, leaves);
    SymbolicSize size;
    for (const DimNode& l : leaves) size.push_back({id[l.tensor], l.dim});
    rule_op.sizes[kCutSizesParam].push_back(size);
  }
}

// One side of a rule. `input_id`: the rule's input ids by generator input (-1 where
// unused); the side's own tensors are numbered after the rule's inputs.
RuleGraph RuleSide(const OpSet& set, const GraphCode& code, const Replayed<uint32_t>& rep,
                   const std::vector<int>& outputs, const std::vector<int>& input_id, int rule_inputs) {
  const int n = static_cast<int>(set.inputs.size());
  std::vector<int> id(rep.num_tensors(), -1);
  for (int i = 0; i < n; ++i) id[i] = input_id[i];
  int next = rule_inputs;
  for (int t = n; t < rep.num_tensors(); ++t) id[t] = next++;
  RuleGraph g;
  for (int o = 0; o < code.num_ops; ++o) {
    const Variant& var = set.variants[code.ops[o].variant];
    RuleOp op;
    op.op = var.op;
    op.params = var.spec.params;
    for (int i = 0; i < var.spec.arity; ++i) op.inputs.push_back(id[code.ops[o].in[i]]);
    const int end = o + 1 < code.num_ops ? rep.first_output[o + 1] : rep.num_tensors();
    op.num_outputs = end - rep.first_output[o];
    if (var.spec.split_at_concat) AddCutSizes(var, code.ops[o], rep, id, op);
    g.ops.push_back(std::move(op));
  }
  for (int o : outputs) g.outputs.push_back(id[o]);
  return g;
}

Rule ToRule(const Enumerator& e, const Candidate& c, const std::string& name) {
  const OpSet& set = e.op_set();
  const int n = static_cast<int>(set.inputs.size());
  auto ra = Replay<uint32_t>(set, c.a, e.inputs());
  auto rb = Replay<uint32_t>(set, c.b, e.inputs());
  // The rule's inputs: those either graph reads, in order.
  const std::vector<bool> used = InputsRead(set, c);
  std::vector<int> input_id(n, -1);
  Rule rule;
  rule.name = name;
  for (int i = 0; i < n; ++i)
    if (used[i]) {
      input_id[i] = static_cast<int>(rule.inputs.size());
      rule.inputs.push_back({set.inputs[i].name, set.inputs[i].shape, !set.inputs[i].activation});
    }
  const int rule_inputs = static_cast<int>(rule.inputs.size());
  rule.source = RuleSide(set, c.a, *ra, c.a_outputs, input_id, rule_inputs);
  rule.target = RuleSide(set, c.b, *rb, c.b_outputs, input_id, rule_inputs);
  return rule;
}

// ---------------------------------------------------------------- pruning

// One candidate per canonical form. There are millions at K=4: the rule as plain data
// is rebuilt from the candidate where needed rather than kept.
struct Form {
  std::string key;
  Candidate candidate;               // the first with this form
  std::vector<size_t> more_general;  // forms that are this one with two inputs merged
};

PRule RuleOf(const OpSet& set, const std::vector<std::string>& input_sigs, const Candidate& c) {
  PRule r;
  r.input_sigs = input_sigs;
  r.a = ToPGraph(set, c.a, c.a_outputs, c.a_op_outputs.data());
  r.b = ToPGraph(set, c.b, c.b_outputs, c.b_op_outputs.data());
  return r;
}

Check CheckOf(const Candidate& c) {
  Check k{c.a, c.b, {}};
  for (size_t i = 0; i < c.a_outputs.size(); ++i) k.equal.push_back({c.a_outputs[i], c.b_outputs[i]});
  return k;
}

// A more general rule a form's validity would make it redundant, and how to check it.
struct Generalization {
  std::string key;
  Check check;
};

// Form 1 of TASO's common subgraphs: an operator both graphs apply to the same inputs
// becomes a fresh input.
std::vector<Generalization> FreshInputGeneralizations(const Enumerator& e, const PRule& r, const Candidate& c) {
  const int n = static_cast<int>(e.op_set().inputs.size());
  std::vector<Generalization> out;
  const Facts fa = FactsOf(e, c.a);
  for (size_t oa = 0; oa < r.a.ops.size(); ++oa)
    for (size_t ob = 0; ob < r.b.ops.size(); ++ob) {
      const auto& x = r.a.ops[oa];
      const auto& y = r.b.ops[ob];
      if (x.variant != y.variant || x.in != y.in) continue;
      if (std::any_of(x.in.begin(), x.in.end(), [&](int i) { return i >= n; })) continue;
      PRule g;
      g.input_sigs = r.input_sigs;
      const int ta = FirstOutput(r.a, n, oa);
      std::vector<int> fresh;
      for (int k = 0; k < x.outputs; ++k) {
        fresh.push_back(static_cast<int>(g.input_sigs.size()));
        g.input_sigs.push_back(Signature(fa.shapes[ta + k], fa.activation[ta + k]));
      }
      const int m = static_cast<int>(g.input_sigs.size());
      g.a = Rebuild(r.a, n, m, static_cast<int>(oa), fresh, nullptr);
      g.b = Rebuild(r.b, n, m, static_cast<int>(ob), fresh, nullptr);
      if (!OutputsAreSinks(g.a, m) || !OutputsAreSinks(g.b, m)) continue;
      Check check = CheckOf(c);
      check.fresh_a = static_cast<int>(oa);
      check.fresh_b = static_cast<int>(ob);
      out.push_back({Canonical(g), std::move(check)});
    }
  return out;
}

// The output pairs left when operators x (a's `oa`) and y (b's `ob`) are peeled off both
// graphs: the pairs not made of their outputs, then their inputs pairwise (a pair stated
// twice once; the same input on both sides states nothing). Empty where some output of x
// is not paired with the same-numbered output of y.
std::vector<std::pair<int, int>> PairsAfterPeeling(const PRule& r, int n, size_t oa, size_t ob) {
  const auto& x = r.a.ops[oa];
  const auto& y = r.b.ops[ob];
  const int ta = FirstOutput(r.a, n, oa), tb = FirstOutput(r.b, n, ob);
  std::vector<size_t> peeled;
  for (int k = 0; k < x.outputs; ++k)
    for (size_t p = 0; p < r.a.outputs.size(); ++p)
      if (r.a.outputs[p] == ta + k && r.b.outputs[p] == tb + k) peeled.push_back(p);
  if (static_cast<int>(peeled.size()) != x.outputs) return {};
  std::vector<std::pair<int, int>> pairs;
  for (size_t p = 0; p < r.a.outputs.size(); ++p)
    if (std::find(peeled.begin(), peeled.end(), p) == peeled.end()) pairs.push_back({r.a.outputs[p], r.b.outputs[p]});
  for (size_t i = 0; i < x.in.size(); ++i)
    if (!(x.in[i] == y.in[i] && x.in[i] < n)) pairs.push_back({x.in[i], y.in[i]});
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

// Form 2 of TASO's common subgraphs: an operator whose outputs are outputs of both graphs
// is removed, and its inputs become outputs.
std::vector<Generalization> PeeledOutputGeneralizations(const Enumerator& e, const PRule& r, const Candidate& c) {
  const int n = static_cast<int>(e.op_set().inputs.size());
  std::vector<Generalization> out;
  for (size_t oa = 0; oa < r.a.ops.size(); ++oa)
    for (size_t ob = 0; ob < r.b.ops.size(); ++ob) {
      const auto& x = r.a.ops[oa];
      const auto& y = r.b.ops[ob];
      if (x.variant != y.variant || x.outputs != y.outputs) continue;
      const std::vector<std::pair<int, int>> pairs = PairsAfterPeeling(r, n, oa, ob);
      if (pairs.empty()) continue;
      PRule g;
      g.input_sigs = r.input_sigs;
      std::vector<int> gone(x.outputs, -1), map_a, map_b;
      g.a = Rebuild(r.a, n, n, static_cast<int>(oa), gone, &map_a);
      g.b = Rebuild(r.b, n, n, static_cast<int>(ob), gone, &map_b);
      g.a.outputs.clear();
      g.b.outputs.clear();
      for (auto [pa, pb] : pairs) {
        g.a.outputs.push_back(map_a[pa]);
        g.b.outputs.push_back(map_b[pb]);
      }
      if (!OutputsAreSinks(g.a, n) || !OutputsAreSinks(g.b, n)) continue;
      // Ids in the candidate's graphs: the ones before removal.
      out.push_back({Canonical(g), Check{c.a, c.b, pairs}});
    }
  return out;
}

// TASO's two forms of common subgraph, form 1 first.
std::vector<Generalization> CommonSubgraphGeneralizations(const Enumerator& e, const PRule& r, const Candidate& c) {
  std::vector<Generalization> out = FreshInputGeneralizations(e, r, c);
  std::vector<Generalization> peeled = PeeledOutputGeneralizations(e, r, c);
  out.insert(out.end(), std::make_move_iterator(peeled.begin()), std::make_move_iterator(peeled.end()));
  return out;
}

// Float-check results by canonical form. Each form is checked through one fixed check,
// so results do not depend on which thread asks first.
class Validity {
 public:
  Validity(const OpSet& set, int threads) : checker_(set, threads) {}
  // `thread`: the caller's ParallelForThreads number.
  bool Holds(const std::string& key, const Check& check, int thread) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = known_.find(key);
      if (it != known_.end()) return it->second;
    }
    const bool holds = checker_.Holds(check, thread);
    std::lock_guard<std::mutex> lock(mu_);
    known_[key] = holds;
    return holds;
  }

 private:
  FloatChecker checker_;
  std::mutex mu_;
  absl::flat_hash_map<std::string, bool> known_;
};

// The candidates' canonical forms and the pruning stages over them, in the order they
// run; each stage marks the forms it prunes as no longer alive.
class RuleFinder {
 public:
  RuleFinder(const Enumerator& e, int threads) : e_(e), set_(e.op_set()), threads_(threads), validity_(set_, threads) {
    for (const GenInput& in : set_.inputs) input_sigs_.push_back(Signature(in.shape, in.activation));
  }

  // One form per canonical string, the first candidate with it standing for all, a slice
  // of fingerprint groups at a time (memory then follows the forms, not the pairs). A
  // slice is the runs up to the first that reaches kSlice graphs, whichever way the runs
  // come: the forms (and which candidate stands for each) are then the same for a single
  // table and a sharded store. Returns how many candidates there were.
  absl::StatusOr<size_t> CollectForms(const SharedRuns& runs) {
    constexpr size_t kSlice = 1 << 18;  // graphs
    size_t candidates = 0;
    std::vector<Fingerprinted> slice;
    RETURN_IF_ERROR(runs([&](absl::Span<const Fingerprinted> run) {
      if (slice.size() >= kSlice) {
        candidates += CollectSlice(slice);
        slice.clear();
      }
      slice.insert(slice.end(), run.begin(), run.end());
    }));
    if (!slice.empty()) candidates += CollectSlice(slice);
    alive_.assign(forms_.size(), 1);
    return candidates;
  }
  size_t num_forms() const { return forms_.size(); }

  // Input renaming: a form that is another with two inputs merged is less general.
  // Returns how many forms are left.
  size_t PruneMergedInputs() {
    LinkMoreGeneral();
    ParallelForThreads(forms_.size(), threads_, [&](int thread, size_t f) {
      for (size_t g : forms_[f].more_general)
        if (FormHolds(g, thread)) {
          alive_[f] = 0;
          break;
        }
    });
    return CountAlive();
  }

  // Common subgraphs, a chunk of forms at a time (all forms' generalizations at once take
  // gigabytes at K=4). Every generalization is checked through its own form if it is one,
  // else through the first form that proposes it: chunks go in form order, so which form
  // that is depends neither on the chunks nor on the threads.
  size_t PruneCommonSubgraphs() {
    absl::flat_hash_map<std::string, Check> first_proposal;
    constexpr size_t kChunk = 1 << 16;
    for (size_t lo = 0; lo < forms_.size(); lo += kChunk)
      PruneCommonSubgraphChunk(lo, std::min(forms_.size(), lo + kChunk), first_proposal);
    return CountAlive();
  }

  // Those left must hold on floats.
  size_t PruneFailingFloatChecks() {
    ParallelForThreads(forms_.size(), threads_, [&](int thread, size_t f) {
      if (alive_[f] && !FormHolds(f, thread)) alive_[f] = 0;
    });
    return CountAlive();
  }

  // The forms left as rules, parameter families merged, named in their deterministic
  // order (fewer operators first, then the canonical form).
  std::vector<Rule> Rules() {
    const std::vector<size_t> order = AliveInRuleOrder();
    std::vector<Rule> concrete(order.size());
    std::vector<PRule> found(order.size());
    ParallelFor(order.size(), threads_, [&](size_t i) {
      concrete[i] = ToRule(e_, forms_[order[i]].candidate, "");
      found[i] = RuleOf(set_, input_sigs_, forms_[order[i]].candidate);
    });
    std::vector<Rule> out = MergeParameters(set_, found, std::move(concrete));
    for (size_t i = 0; i < out.size(); ++i) {
      char name[24];
      std::snprintf(name, sizeof(name), "r%04zu", i);
      out[i].name = name;
    }
    return out;
  }

 private:
  // The candidates of whole fingerprint groups, into forms; returns how many there were.
  size_t CollectSlice(absl::Span<const Fingerprinted> slice) {
    std::vector<Candidate> raw = PairUp(e_, slice, threads_);
    std::vector<std::string> keys(raw.size());
    ParallelFor(raw.size(), threads_, [&](size_t i) {
      raw[i] = NormalizeShapeOnlyInputs(set_, raw[i]);
      keys[i] = Canonical(RuleOf(set_, input_sigs_, raw[i]));
    });
    for (size_t i = 0; i < raw.size(); ++i)
      if (form_of_.emplace(keys[i], forms_.size()).second) forms_.push_back({keys[i], std::move(raw[i]), {}});
    return raw.size();
  }

  // Fills each form's more_general: the forms that are it with two inputs merged.
  void LinkMoreGeneral() {
    std::vector<std::vector<size_t>> merged_into(forms_.size());
    ParallelFor(forms_.size(), threads_, [&](size_t f) { merged_into[f] = MergedForms(f); });
    for (size_t f = 0; f < forms_.size(); ++f)
      for (size_t m : merged_into[f]) forms_[m].more_general.push_back(f);
  }

  // The other forms that form `f` becomes with two inputs of the same signature merged.
  std::vector<size_t> MergedForms(size_t f) const {
    std::vector<size_t> out;
    const PRule r = RuleOf(set_, input_sigs_, forms_[f].candidate);
    std::vector<int> used = UsedInputs(r);
    for (size_t x = 0; x < used.size(); ++x)
      for (size_t y = x + 1; y < used.size(); ++y) {
        if (r.input_sigs[used[x]] != r.input_sigs[used[y]]) continue;
        PRule merged = r;
        for (PGraph* g : {&merged.a, &merged.b}) {
          for (auto& op : g->ops)
            for (int& i : op.in)
              if (i == used[y]) i = used[x];
          for (int& o : g->outputs)
            if (o == used[y]) o = used[x];
        }
        auto it = form_of_.find(Canonical(merged));
        if (it != form_of_.end() && it->second != f) out.push_back(it->second);
      }
    return out;
  }

  // Prunes the live forms in [lo, hi) that have a valid common-subgraph generalization.
  void PruneCommonSubgraphChunk(size_t lo, size_t hi, absl::flat_hash_map<std::string, Check>& first_proposal) {
    std::vector<std::vector<Generalization>> general(hi - lo);
    ParallelFor(hi - lo, threads_, [&](size_t i) {
      const Candidate& c = forms_[lo + i].candidate;
      if (alive_[lo + i]) general[i] = CommonSubgraphGeneralizations(e_, RuleOf(set_, input_sigs_, c), c);
    });
    for (const auto& gens : general)
      for (const Generalization& g : gens)
        if (!form_of_.contains(g.key)) first_proposal.emplace(g.key, g.check);
    ParallelForThreads(hi - lo, threads_, [&](int thread, size_t i) {
      for (const Generalization& g : general[i]) {
        auto own = form_of_.find(g.key);
        if (own != form_of_.end() ? FormHolds(own->second, thread)
                                  : validity_.Holds(g.key, first_proposal.at(g.key), thread)) {
          alive_[lo + i] = 0;
          break;
        }
      }
    });
  }

  // The live forms, fewer operators first, then by canonical form.
  std::vector<size_t> AliveInRuleOrder() const {
    std::vector<std::pair<std::pair<int, std::string>, size_t>> order;
    for (size_t f = 0; f < forms_.size(); ++f)
      if (alive_[f]) {
        const Candidate& c = forms_[f].candidate;
        order.push_back({{c.a.num_ops + c.b.num_ops, forms_[f].key}, f});
      }
    std::sort(order.begin(), order.end());
    std::vector<size_t> out;
    for (const auto& o : order) out.push_back(o.second);
    return out;
  }

  bool FormHolds(size_t f, int thread) { return validity_.Holds(forms_[f].key, CheckOf(forms_[f].candidate), thread); }
  size_t CountAlive() const { return static_cast<size_t>(std::count(alive_.begin(), alive_.end(), 1)); }

  const Enumerator& e_;
  const OpSet& set_;
  const int threads_;
  std::vector<std::string> input_sigs_;  // per generator input
  std::vector<Form> forms_;
  absl::flat_hash_map<std::string, size_t> form_of_;  // canonical string -> form
  std::vector<char> alive_;                           // per form: not pruned yet
  Validity validity_;
};

}  // namespace

absl::StatusOr<std::vector<Rule>> FindRules(const Enumerator& e, const SharedRuns& runs, int threads,
                                             PruneCounts* counts,
                                             const std::function<void(const std::string&)>& phase) {
  RuleFinder finder(e, threads);
  ASSIGN_OR_RETURN(const size_t candidates, finder.CollectForms(runs));
  counts->candidates += candidates;
  counts->distinct = finder.num_forms();
  phase(absl::StrCat(counts->candidates, " candidate pairs, ", counts->distinct, " distinct up to renaming"));
  counts->after_renaming = finder.PruneMergedInputs();
  phase(absl::StrCat(counts->after_renaming, " after input renaming"));
  counts->after_common_subgraph = finder.PruneCommonSubgraphs();
  phase(absl::StrCat(counts->after_common_subgraph, " after common subgraph"));
  counts->after_float_checks = finder.PruneFailingFloatChecks();
  phase(absl::StrCat(counts->after_float_checks, " hold on floats"));
  std::vector<Rule> rules = finder.Rules();
  counts->after_parameters = rules.size();
  return rules;
}

}  // namespace taso::gen
