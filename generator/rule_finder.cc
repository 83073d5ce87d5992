#include "rule_finder.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "canonical.h"
#include "float_check.h"
#include "form_store.h"
#include "parametric.h"
#include "replay.h"
#include "taso/ir/parallel.h"
#include "taso/ir/status_macros.h"

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

PRule RuleOf(const OpSet& set, const Sigs& input_sigs, const Candidate& c) {
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
  FormKey key;
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
      out.push_back({KeyOf(FormIdentity(g)), std::move(check)});
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
      out.push_back({KeyOf(FormIdentity(g)), Check{c.a, c.b, pairs}});
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

// Float-check results. A form is checked through its own candidate; a generalization that
// is no form through the first check proposed for it (forms propose theirs in form order),
// so results depend neither on the threads nor on the order of the questions.
class Validity {
 public:
  Validity(const OpSet& set, int threads, size_t forms)
      : checker_(set, threads), forms_(new std::atomic<uint8_t>[forms]) {
    for (size_t f = 0; f < forms; ++f) forms_[f].store(kUnknown, std::memory_order_relaxed);
  }

  bool FormKnown(size_t f) const { return forms_[f].load(std::memory_order_relaxed) != kUnknown; }
  // A known form's answer.
  bool KnownHolds(size_t f) const { return forms_[f].load(std::memory_order_relaxed) == kHolds; }
  // Forms' checks, a batch at once (FloatChecker::HoldsAll).
  std::vector<bool> HoldsAll(absl::Span<const Check> checks, int thread) const {
    return checker_.HoldsAll(checks, thread);
  }
  void Record(size_t f, bool holds) {
    forms_[f].store(holds ? kHolds : kFails, std::memory_order_relaxed);
    ++checks_;
  }

  // Keeps the first check proposed for a generalization that is no form.
  void Propose(const FormKey& key, const Check& check) {
    std::lock_guard<std::mutex> lock(mu_);
    others_.try_emplace(key, Other{kUnknown, check});
  }
  // Of `keys` (proposed), those whose check is not made yet, each once, with its check.
  std::vector<std::pair<FormKey, Check>> Unchecked(absl::Span<const FormKey> keys) {
    std::lock_guard<std::mutex> lock(mu_);
    absl::flat_hash_set<FormKey> seen;
    std::vector<std::pair<FormKey, Check>> unchecked;
    for (const FormKey& key : keys)
      if (const Other& o = others_.at(key); o.state == kUnknown && seen.insert(key).second)
        unchecked.push_back({key, o.check});
    return unchecked;
  }
  void RecordProposed(const FormKey& key, bool holds) {
    std::lock_guard<std::mutex> lock(mu_);
    Other& o = others_.at(key);
    o.state = holds ? kHolds : kFails;
    o.check = Check{};  // its answer is all that is needed now
    ++checks_;
  }
  // A proposed generalization's answer, once checked.
  bool ProposedHolds(const FormKey& key) {
    std::lock_guard<std::mutex> lock(mu_);
    return others_.at(key).state == kHolds;
  }
  size_t checks() const { return checks_.load(); }
  size_t proposals() const { return others_.size(); }

 private:
  static constexpr uint8_t kUnknown = 0, kHolds = 1, kFails = 2;
  struct Other {
    uint8_t state;
    Check check;
  };
  FloatChecker checker_;
  std::unique_ptr<std::atomic<uint8_t>[]> forms_;  // per form
  std::mutex mu_;
  absl::flat_hash_map<FormKey, Other> others_;
  std::atomic<size_t> checks_{0};
};

// The candidates' canonical forms and the pruning stages over them, in the order they
// run; each stage marks the forms it prunes as no longer alive. Forms are read a chunk at
// a time in form order (they may be on disk), and only compact per-form state (a key in
// the index, a byte alive, a byte of float-check result) is held for all of them.
class RuleFinder {
 public:
  RuleFinder(const Enumerator& e, const FinderOptions& options)
      : e_(e),
        set_(e.op_set()),
        threads_(std::max(1, options.threads)),
        options_(options),
        folder_(options.spill_dir),
        forms_(&folder_, options.memory_bytes),
        families_(set_),
        pairer_(e, threads_) {
    for (const GenInput& in : set_.inputs) input_sigs_.push_back(Signature(in.shape, in.activation));
  }

  // One form per canonical string, the first candidate with it standing for all, a slice
  // of fingerprint groups at a time (memory then follows the forms, not the pairs). A
  // slice is the runs up to the first that reaches kSliceGraphs graphs, whichever way the
  // runs come: the forms (and which candidate stands for each) are then the same for a
  // single table, a sharded store and a team's ranks (rank_runs.h). Returns how many
  // candidates there were.
  absl::StatusOr<size_t> CollectForms(const SharedRuns& runs) {
    size_t candidates = 0;
    std::vector<Fingerprinted> slice;
    absl::Status collected = absl::OkStatus();
    RETURN_IF_ERROR(runs([&](absl::Span<const Fingerprinted> run) {
      if (SliceEnds(slice.size())) {
        if (collected.ok()) collected = CollectSlice(slice, &candidates);
        slice.clear();
      }
      slice.insert(slice.end(), run.begin(), run.end());
    }));
    if (!slice.empty() && collected.ok()) collected = CollectSlice(slice, &candidates);
    RETURN_IF_ERROR(collected);
    return candidates;
  }

  // A team's forms meet on rank 0 (team.h): each other rank sends its candidate count,
  // then its forms in form order, a chunk at a time with their keys, then nothing. Ranks
  // hold consecutive slices (rank_runs.h), so rank 0, taking them in rank order and each
  // form whose key is new, has the forms of a single process in its order.
  absl::Status SendForms(Team& team, size_t candidates) {
    const uint64_t count = candidates;
    RETURN_IF_ERROR(team.Send(0, AsBytes(absl::MakeConstSpan(&count, 1))));
    RETURN_IF_ERROR(ForEachChunk("sending forms", [&](size_t, const std::vector<PackedCandidate>& chunk) {
      std::vector<KeyedForm> keyed(chunk.size());
      ParallelFor(chunk.size(), threads_, [&](size_t i) {
        keyed[i] = {KeyOf(FormIdentity(RuleOf(set_, input_sigs_, Unpack(chunk[i])))), chunk[i]};
      });
      return team.Send(0, AsBytes(absl::MakeConstSpan(keyed)));
    }));
    return team.Send(0, {});
  }
  // Rank `from`'s forms after those held (see SendForms); returns its candidate count.
  absl::StatusOr<size_t> ReceiveForms(Team& team, int from) {
    ASSIGN_OR_RETURN(std::vector<char> count, team.Receive(from));
    if (count.size() != sizeof(uint64_t)) return absl::DataLossError(absl::StrCat("rank ", from, ": no form count"));
    for (;;) {
      ASSIGN_OR_RETURN(std::vector<char> bytes, team.Receive(from));
      if (bytes.empty()) break;
      for (const KeyedForm& f : FromBytes<KeyedForm>(bytes))
        if (forms_.Find(f.key) < 0) RETURN_IF_ERROR(forms_.Insert(f.key, f.form).status());
    }
    return FromBytes<uint64_t>(count)[0];
  }

  // After the last form: the pruning stages' state.
  void Seal() {
    alive_.assign(forms_.size(), 1);
    validity_ = std::make_unique<Validity>(set_, threads_, forms_.size());
  }
  size_t num_forms() const { return forms_.size(); }
  uint64_t forms_disk_bytes() const { return forms_.disk_bytes(); }
  size_t float_checks() const { return validity_ ? validity_->checks() : 0; }

  // Input renaming: a form that another becomes with two inputs merged is less general,
  // pruned if one of those others holds (tried in form order, up to the first that does).
  // Returns how many forms are left.
  absl::StatusOr<size_t> PruneMergedInputs() {
    // (merged form, the more general form) for every pair, 8 bytes each: in all a few
    // times fewer bytes than the forms' records.
    std::vector<std::pair<uint32_t, uint32_t>> edges;
    RETURN_IF_ERROR(ForEachChunk("input renaming", [&](size_t lo, const std::vector<PackedCandidate>& chunk) {
      std::vector<std::vector<uint32_t>> merged(chunk.size());
      ParallelFor(chunk.size(), threads_, [&](size_t i) { merged[i] = MergedForms(lo + i, Unpack(chunk[i])); });
      for (size_t i = 0; i < chunk.size(); ++i)
        for (uint32_t m : merged[i]) edges.push_back({m, static_cast<uint32_t>(lo + i)});
      return absl::OkStatus();
    }));
    std::sort(edges.begin(), edges.end());
    std::vector<size_t> starts;  // of each merged form's edges
    for (size_t i = 0; i < edges.size(); ++i)
      if (i == 0 || edges[i].first != edges[i - 1].first) starts.push_back(i);
    starts.push_back(edges.size());
    // Round r asks each merged form not yet pruned for its r-th more general form, and
    // all of a round's checks are made at once: the same answers as asking one form at a
    // time, in about a quarter less time (FloatChecker::HoldsAll).
    std::vector<size_t> next(starts.begin(), starts.end() - 1);  // per merged form: its edge to ask
    std::vector<uint32_t> asking(next.size());
    std::iota(asking.begin(), asking.end(), 0);
    while (!asking.empty()) {
      std::vector<uint32_t> generals;
      for (uint32_t k : asking) generals.push_back(edges[next[k]].second);
      RETURN_IF_ERROR(CheckForms(std::move(generals), "input renaming checks"));
      std::vector<uint32_t> still;
      for (uint32_t k : asking) {
        const auto [merged, general] = edges[next[k]];
        if (validity_->KnownHolds(general))
          alive_[merged] = 0;
        else if (++next[k] < starts[k + 1])
          still.push_back(k);
      }
      asking.swap(still);
    }
    return CountAlive();
  }

  // Common subgraphs, a chunk of forms at a time. Every generalization is checked through
  // its own form if it is one, else through the first form that proposes it: chunks go
  // in form order, so which form that is depends neither on the chunks nor on the threads.
  // Within a chunk, round r asks each form not yet pruned for its r-th generalization,
  // all of a round's checks made at once (as in PruneMergedInputs): the same answers as
  // asking each form's in turn up to the first that holds.
  absl::StatusOr<size_t> PruneCommonSubgraphs() {
    RETURN_IF_ERROR(ForEachChunk("common subgraphs", [&](size_t lo, const std::vector<PackedCandidate>& chunk) {
      std::vector<std::vector<Generalization>> general(chunk.size());
      std::vector<std::vector<int64_t>> own(chunk.size());  // the form each is, or -1
      ParallelFor(chunk.size(), threads_, [&](size_t i) {
        if (!alive_[lo + i]) return;
        const Candidate c = Unpack(chunk[i]);
        general[i] = CommonSubgraphGeneralizations(e_, RuleOf(set_, input_sigs_, c), c);
        for (const Generalization& g : general[i]) own[i].push_back(forms_.Find(g.key));
      });
      std::vector<uint32_t> asking;  // positions in the chunk
      for (size_t i = 0; i < chunk.size(); ++i) {
        for (size_t k = 0; k < general[i].size(); ++k)
          if (own[i][k] < 0) validity_->Propose(general[i][k].key, general[i][k].check);
        if (!general[i].empty()) asking.push_back(static_cast<uint32_t>(i));
      }
      for (size_t round = 0; !asking.empty(); ++round) {
        std::vector<uint32_t> forms;
        std::vector<FormKey> proposed;
        for (uint32_t i : asking) {
          if (own[i][round] >= 0)
            forms.push_back(static_cast<uint32_t>(own[i][round]));
          else
            proposed.push_back(general[i][round].key);
        }
        RETURN_IF_ERROR(CheckForms(std::move(forms), nullptr));
        CheckProposed(proposed);
        std::vector<uint32_t> still;
        for (uint32_t i : asking) {
          const bool holds = own[i][round] >= 0 ? validity_->KnownHolds(static_cast<size_t>(own[i][round]))
                                                : validity_->ProposedHolds(general[i][round].key);
          if (holds)
            alive_[lo + i] = 0;
          else if (round + 1 < general[i].size())
            still.push_back(i);
        }
        asking.swap(still);
      }
      return absl::OkStatus();
    }));
    return CountAlive();
  }

  // Those left must hold on floats.
  absl::StatusOr<size_t> PruneFailingFloatChecks() {
    std::vector<uint32_t> alive;
    for (size_t f = 0; f < alive_.size(); ++f)
      if (alive_[f]) alive.push_back(static_cast<uint32_t>(f));
    RETURN_IF_ERROR(CheckForms(alive, "float checks"));
    for (uint32_t f : alive) alive_[f] = validity_->KnownHolds(f);
    return CountAlive();
  }

  // The forms left as rules, parameter families merged, named in their deterministic
  // order (fewer operators first, then the canonical form), to `sink` a batch at a time.
  // Returns how many.
  absl::StatusOr<size_t> WriteRules(const RuleBatchSink& sink) {
    ASSIGN_OR_RETURN(std::vector<Live> live, AliveInRuleOrder());
    // Families, a share of the groups at a time: all of their rules as plain data at once
    // take gigabytes at K=4.
    const uint64_t shares = live.size() / std::max<size_t>(1, options_.family_share) + 1;
    std::vector<uint8_t> dropped(live.size(), 0);
    absl::flat_hash_map<size_t, FamilyVars> first_of;  // by position in `live`
    for (uint64_t share = 0; share < shares; ++share) {
      std::vector<size_t> at;  // positions in `live`
      for (size_t i = 0; i < live.size(); ++i)
        if (live[i].group % shares == share) at.push_back(i);
      std::vector<PRule> found(at.size());
      absl::Status status = absl::OkStatus();
      absl::Mutex mu;
      ParallelFor(at.size(), threads_, [&](size_t k) {
        absl::StatusOr<Candidate> c = CandidateOf(live[at[k]].form);
        if (!c.ok()) {
          absl::MutexLock lock(&mu);
          status.Update(c.status());
          return;
        }
        found[k] = RuleOf(set_, input_sigs_, *c);
      });
      RETURN_IF_ERROR(status);
      for (FamilyVars& fam : families_.Families(found)) {
        for (size_t& m : fam.members) m = at[m];
        for (size_t k = 1; k < fam.members.size(); ++k) dropped[fam.members[k]] = 1;
        const size_t first = fam.members[0];
        first_of.emplace(first, std::move(fam));
      }
    }
    // The rules in order, a batch at a time.
    constexpr size_t kBatch = 1 << 14;
    size_t written = 0;
    std::vector<size_t> batch;
    auto flush = [&]() -> absl::Status {
      std::vector<Rule> rules(batch.size());
      absl::Status status = absl::OkStatus();
      absl::Mutex mu;
      ParallelFor(batch.size(), threads_, [&](size_t k) {
        absl::StatusOr<Candidate> c = CandidateOf(live[batch[k]].form);
        if (!c.ok()) {
          absl::MutexLock lock(&mu);
          status.Update(c.status());
          return;
        }
        rules[k] = ToRule(e_, *c, "");
        auto fam = first_of.find(batch[k]);
        if (fam != first_of.end()) ParameterFamilies::Bind(fam->second, rules[k]);
      });
      RETURN_IF_ERROR(status);
      for (Rule& r : rules) {
        char name[24];
        std::snprintf(name, sizeof(name), "r%04zu", written++);
        r.name = name;
      }
      batch.clear();
      return sink(std::move(rules));
    };
    for (size_t i = 0; i < live.size(); ++i) {
      if (dropped[i]) continue;
      batch.push_back(i);
      if (batch.size() == kBatch) RETURN_IF_ERROR(flush());
    }
    if (!batch.empty()) RETURN_IF_ERROR(flush());
    return written;
  }

 private:
  struct KeyedForm {
    FormKey key;
    PackedCandidate form;
  };
  // A live form in the rules' order, and the hash of its parameter family's group.
  struct Live {
    uint32_t form;
    uint64_t group;
  };

  // Calls fn(lo, forms [lo, lo + chunk size)) in form order, telling the progress.
  template <typename Fn>
  absl::Status ForEachChunk(const char* stage, Fn fn) {
    const size_t kChunk = std::max<size_t>(1, options_.chunk);
    std::vector<PackedCandidate> chunk;
    for (size_t lo = 0; lo < forms_.size(); lo += kChunk) {
      chunk.resize(std::min(kChunk, forms_.size() - lo));
      RETURN_IF_ERROR(forms_.Read(lo, chunk.size(), chunk.data()));
      RETURN_IF_ERROR(fn(lo, chunk));
      if (options_.progress) options_.progress(stage, lo + chunk.size(), forms_.size());
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Candidate> CandidateOf(size_t f) const {
    PackedCandidate p;
    RETURN_IF_ERROR(forms_.Read(f, 1, &p));
    return Unpack(p);
  }

  // Checks the forms whose answer is not known yet, a batch at a time (HoldsInParts);
  // `stage` names them in progress lines (none: no lines).
  absl::Status CheckForms(std::vector<uint32_t> forms, const char* stage) {
    std::sort(forms.begin(), forms.end());
    forms.erase(std::unique(forms.begin(), forms.end()), forms.end());
    std::erase_if(forms, [&](uint32_t f) { return validity_->FormKnown(f); });
    constexpr size_t kBatch = 1 << 16;
    for (size_t lo = 0; lo < forms.size(); lo += kBatch) {
      const size_t n = std::min(kBatch, forms.size() - lo);
      std::vector<Check> checks(n);
      for (size_t i = 0; i < n; ++i) {
        ASSIGN_OR_RETURN(Candidate c, CandidateOf(forms[lo + i]));
        checks[i] = CheckOf(c);
      }
      const std::vector<uint8_t> holds = HoldsInParts(checks);
      for (size_t i = 0; i < n; ++i) validity_->Record(forms[lo + i], holds[i]);
      if (options_.progress && stage != nullptr) options_.progress(stage, lo + n, forms.size());
    }
    return absl::OkStatus();
  }

  // The checks of proposed generalizations among `keys` not made yet, made at once.
  void CheckProposed(absl::Span<const FormKey> keys) {
    const std::vector<std::pair<FormKey, Check>> unchecked = validity_->Unchecked(keys);
    std::vector<Check> checks;
    for (const auto& [key, check] : unchecked) checks.push_back(check);
    const std::vector<uint8_t> holds = HoldsInParts(checks);
    for (size_t i = 0; i < unchecked.size(); ++i) validity_->RecordProposed(unchecked[i].first, holds[i]);
  }

  // Whether each check holds, the threads taking parts of kPart checks a trial at a time
  // (FloatChecker::HoldsAll).
  std::vector<uint8_t> HoldsInParts(absl::Span<const Check> checks) const {
    constexpr size_t kPart = 1 << 11;
    std::vector<uint8_t> holds(checks.size());
    ParallelForThreads((checks.size() + kPart - 1) / kPart, threads_, [&](int thread, size_t part) {
      const size_t begin = part * kPart, end = std::min(checks.size(), begin + kPart);
      const std::vector<bool> h = validity_->HoldsAll(checks.subspan(begin, end - begin), thread);
      std::copy(h.begin(), h.end(), holds.begin() + begin);
    });
    return holds;
  }

  // How often `code` applies the operator options_.changing.
  int CountChanging(const GraphCode& code) const {
    int n = 0;
    for (int o = 0; o < code.num_ops; ++o) n += set_.variants[code.ops[o].variant].op->name() == options_.changing;
    return n;
  }

  // The runs of `slice` (whole runs of equal fingerprints) whose graphs apply
  // options_.changing a different number of times: no other run pairs a candidate that
  // changes the count.
  std::vector<Fingerprinted> RunsChangingCount(absl::Span<const Fingerprinted> slice) const {
    std::vector<Fingerprinted> kept;
    for (size_t begin = 0, end; begin < slice.size(); begin = end) {
      const int first = CountChanging(slice[begin].graph);
      bool differ = false;
      for (end = begin + 1; end < slice.size() && slice[end].fingerprint == slice[begin].fingerprint; ++end)
        differ = differ || CountChanging(slice[end].graph) != first;
      if (differ) kept.insert(kept.end(), slice.begin() + begin, slice.begin() + end);
    }
    return kept;
  }

  // The candidates of whole fingerprint groups, into forms (those changing how often
  // options_.changing is applied, where it is set); counts them into `candidates`.
  absl::Status CollectSlice(absl::Span<const Fingerprinted> slice, size_t* candidates) {
    std::vector<Fingerprinted> changing;
    if (!options_.changing.empty()) slice = changing = RunsChangingCount(slice);
    std::vector<Candidate> raw = pairer_.PairUp(slice);
    if (!options_.changing.empty())
      std::erase_if(raw, [&](const Candidate& c) { return CountChanging(c.a) == CountChanging(c.b); });
    std::vector<FormKey> keys(raw.size());
    ParallelFor(raw.size(), threads_, [&](size_t i) {
      raw[i] = NormalizeShapeOnlyInputs(set_, raw[i]);
      keys[i] = KeyOf(FormIdentity(RuleOf(set_, input_sigs_, raw[i])));
    });
    for (size_t i = 0; i < raw.size(); ++i) {
      if (forms_.Find(keys[i]) >= 0) continue;
      PackedCandidate p;
      if (!Pack(raw[i], &p))
        return absl::InternalError(absl::StrCat("a candidate with ", raw[i].a_outputs.size(), " outputs"));
      RETURN_IF_ERROR(forms_.Insert(keys[i], p).status());
    }
    *candidates += raw.size();
    if (options_.progress) options_.progress("candidates", *candidates, forms_.size());
    return absl::OkStatus();
  }

  // The other forms that form `f` becomes with two inputs of the same signature merged.
  std::vector<uint32_t> MergedForms(size_t f, const Candidate& c) const {
    std::vector<uint32_t> out;
    const PRule r = RuleOf(set_, input_sigs_, c);
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
        const int64_t m = forms_.Find(KeyOf(FormIdentity(merged)));
        if (m >= 0 && static_cast<size_t>(m) != f) out.push_back(static_cast<uint32_t>(m));
      }
    return out;
  }

  // The live forms, fewer operators first, then by canonical form.
  absl::StatusOr<std::vector<Live>> AliveInRuleOrder() {
    struct Keyed {
      int ops;
      std::string key;
      Live live;
    };
    std::vector<Keyed> keyed;
    RETURN_IF_ERROR(ForEachChunk("rules", [&](size_t lo, const std::vector<PackedCandidate>& chunk) {
      std::vector<Keyed> part(chunk.size());
      ParallelFor(chunk.size(), threads_, [&](size_t i) {
        if (!alive_[lo + i]) return;
        const Candidate c = Unpack(chunk[i]);
        const PRule r = RuleOf(set_, input_sigs_, c);
        part[i] = {c.a.num_ops + c.b.num_ops, Canonical(r), {static_cast<uint32_t>(lo + i), families_.GroupHash(r)}};
      });
      for (size_t i = 0; i < chunk.size(); ++i)
        if (alive_[lo + i]) keyed.push_back(std::move(part[i]));
      return absl::OkStatus();
    }));
    std::sort(keyed.begin(), keyed.end(),
              [](const Keyed& x, const Keyed& y) { return std::tie(x.ops, x.key) < std::tie(y.ops, y.key); });
    std::vector<Live> out;
    out.reserve(keyed.size());
    for (const Keyed& k : keyed) out.push_back(k.live);
    return out;
  }

  size_t CountAlive() const { return static_cast<size_t>(std::count(alive_.begin(), alive_.end(), 1)); }

  const Enumerator& e_;
  const OpSet& set_;
  const int threads_;
  const FinderOptions options_;
  Sigs input_sigs_;  // per generator input
  SpillFolder folder_;
  FormStore forms_;
  std::vector<uint8_t> alive_;  // per form: not pruned yet
  std::unique_ptr<Validity> validity_;
  ParameterFamilies families_;
  Pairer pairer_;
};

}  // namespace

absl::Status FindRules(const Enumerator& e, const SharedRuns& runs, const FinderOptions& options, PruneCounts* counts,
                       const std::function<void(const std::string&)>& phase, const RuleBatchSink& sink, Team& team) {
  RuleFinder finder(e, options);
  ASSIGN_OR_RETURN(size_t candidates, finder.CollectForms(runs));
  if (team.rank() != 0) return finder.SendForms(team, candidates);
  for (int from = 1; from < team.size(); ++from) {
    ASSIGN_OR_RETURN(const size_t theirs, finder.ReceiveForms(team, from));
    candidates += theirs;
  }
  finder.Seal();
  counts->candidates += candidates;
  counts->distinct = finder.num_forms();
  counts->forms_disk_bytes = finder.forms_disk_bytes();
  phase(absl::StrCat(counts->candidates, " candidate pairs, ", counts->distinct, " distinct up to renaming (",
                     counts->forms_disk_bytes >> 20, " MiB of them on disk)"));
  ASSIGN_OR_RETURN(counts->after_renaming, finder.PruneMergedInputs());
  phase(absl::StrCat(counts->after_renaming, " after input renaming (", finder.float_checks(), " float checks)"));
  ASSIGN_OR_RETURN(counts->after_common_subgraph, finder.PruneCommonSubgraphs());
  phase(
      absl::StrCat(counts->after_common_subgraph, " after common subgraph (", finder.float_checks(), " float checks)"));
  ASSIGN_OR_RETURN(counts->after_float_checks, finder.PruneFailingFloatChecks());
  counts->float_checks = finder.float_checks();
  phase(absl::StrCat(counts->after_float_checks, " hold on floats (", counts->float_checks, " float checks)"));
  ASSIGN_OR_RETURN(counts->after_parameters, finder.WriteRules(sink));
  return absl::OkStatus();
}

}  // namespace taso::gen
