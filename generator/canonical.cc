#include "canonical.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace taso::gen {
namespace {

using Uses = absl::InlinedVector<int, 6>;  // see UsesOf

// Buffers reused across calls: taso-gen computes tens of millions of canonical forms,
// and allocating them anew each time was most of the cost.
struct Scratch {
  std::vector<int> first_output, canon_a, canon_b, label, order, used;
  std::vector<char> seen;
  std::vector<Uses> uses;
  std::vector<std::pair<size_t, size_t>> classes;
  std::vector<char> placed;
  std::string sa, sb, x, y, best;
  std::vector<std::pair<int, int>> ab, ba;
  CanonicalOrder current;
};

// The ready operator (every input labelled in `canon`, not yet placed) with the smallest
// key (variant, input labels, -1 for none), and its key.
int NextReadyOp(const PGraph& g, const std::vector<int>& canon, const std::vector<char>& placed,
                std::array<int, 4>& best_key) {
  int best = -1;
  for (size_t o = 0; o < g.ops.size(); ++o) {
    if (placed[o] || g.ops[o].in.size() > 3) continue;
    std::array<int, 4> key = {g.ops[o].variant, -1, -1, -1};
    bool ready = true;
    for (size_t i = 0; i < g.ops[o].in.size(); ++i) {
      key[i + 1] = canon[g.ops[o].in[i]];
      ready &= key[i + 1] >= 0;
    }
    if (ready && (best < 0 || key < best_key)) {
      best = static_cast<int>(o);
      best_key = key;
    }
  }
  return best;
}

// Serializes a graph in its canonical operator order under an input labelling: at each
// step the ready operator with the smallest (variant, input labels). One byte per token
// (variants and labels are below 255; 255 ends an operator), so keys are short.
void Serialize(const PGraph& g, int num_inputs, const std::vector<int>& label, Scratch& k, std::vector<int>& canon,
               std::string& s, std::vector<int>* op_order) {
  if (op_order) op_order->clear();
  s.clear();
  int next_id = *std::max_element(label.begin(), label.begin() + num_inputs) + 1;
  int t = num_inputs;
  k.first_output.resize(g.ops.size());
  for (size_t o = 0; o < g.ops.size(); ++o) {
    k.first_output[o] = t;
    t += g.ops[o].outputs;
  }
  canon.assign(t, -1);
  std::copy(label.begin(), label.begin() + num_inputs, canon.begin());
  k.placed.assign(g.ops.size(), 0);
  for (size_t step = 0; step < g.ops.size(); ++step) {
    std::array<int, 4> best_key{};
    const int best = NextReadyOp(g, canon, k.placed, best_key);
    k.placed[best] = 1;
    if (op_order) op_order->push_back(best);
    for (int j = 0; j < g.ops[best].outputs; ++j) canon[k.first_output[best] + j] = next_id++;
    for (int v : best_key)
      if (v >= 0) s.push_back(static_cast<char>(v));
    s.push_back(static_cast<char>(255));
  }
}

void Join(const std::string& first, const std::string& second, const std::vector<std::pair<int, int>>& outs,
          std::string& s) {
  s = first;
  s.push_back(static_cast<char>(254));
  s += second;
  s.push_back(static_cast<char>(254));
  for (auto [x, y] : outs) {
    s.push_back(static_cast<char>(x));
    s.push_back(static_cast<char>(y));
  }
}

// The rule serialized under one input labelling, into k.best if it is smaller (or the
// first); the operator order too, where asked for.
void OfferLabelling(const PRule& r, Scratch& k, bool want_order) {
  const int n = static_cast<int>(r.input_sigs.size());
  CanonicalOrder* o = want_order ? &k.current : nullptr;
  Serialize(r.a, n, k.label, k, k.canon_a, k.sa, o ? &o->first : nullptr);
  Serialize(r.b, n, k.label, k, k.canon_b, k.sb, o ? &o->second : nullptr);
  k.ab.clear();
  k.ba.clear();
  for (size_t i = 0; i < r.a.outputs.size(); ++i) {
    k.ab.push_back({k.canon_a[r.a.outputs[i]], k.canon_b[r.b.outputs[i]]});
    k.ba.push_back({k.canon_b[r.b.outputs[i]], k.canon_a[r.a.outputs[i]]});
  }
  std::sort(k.ab.begin(), k.ab.end());
  std::sort(k.ba.begin(), k.ba.end());
  Join(k.sa, k.sb, k.ab, k.x);
  Join(k.sb, k.sa, k.ba, k.y);
  const bool swapped = k.y < k.x;
  const std::string& s = swapped ? k.y : k.x;
  if (!k.best.empty() && !(s < k.best)) return;
  k.best = s;
  if (o) {
    o->swapped = swapped;
    if (swapped) std::swap(o->first, o->second);
  }
}

// The tensors no operator reads.
std::vector<int> Sinks(const PGraph& g, int num_inputs) {
  int t = num_inputs;
  for (const auto& op : g.ops) t += op.outputs;
  std::vector<bool> read(t, false);
  for (const auto& op : g.ops)
    for (int i : op.in) read[i] = true;
  std::vector<int> out;
  for (int i = num_inputs; i < t; ++i)
    if (!read[i]) out.push_back(i);
  return out;
}

}  // namespace

Sig Signature(const Shape& s, bool activation) { return static_cast<Sig>(2 * s.size() + (activation ? 0 : 1)); }

std::string SigText(Sig sig) { return absl::StrCat(sig / 2, sig % 2 ? "w" : "a"); }

namespace {

// The inputs either graph reads or outputs, in order, into `out`; `seen` is scratch.
void UsedInputsInto(const PRule& r, std::vector<char>& seen, std::vector<int>& out) {
  const int n = static_cast<int>(r.input_sigs.size());
  seen.assign(n, 0);
  for (const PGraph* g : {&r.a, &r.b}) {
    for (const auto& op : g->ops)
      for (int i : op.in)
        if (i < n) seen[i] = 1;
    for (int o : g->outputs)
      if (o < n) seen[o] = 1;
  }
  out.clear();
  for (int i = 0; i < n; ++i)
    if (seen[i]) out.push_back(i);
}

}  // namespace

std::vector<int> UsedInputs(const PRule& r) {
  std::vector<char> seen;
  std::vector<int> out;
  UsedInputsInto(r, seen, out);
  return out;
}

namespace {

// What an input is to the rule whatever its name: how each operator of either graph reads
// it (variant and position), and whether it is an output, as sorted tokens. Renaming the
// inputs permutes these among inputs; it changes none.
Uses UsesOf(const PRule& r, int input) {
  Uses uses;
  for (const PGraph* g : {&r.a, &r.b}) {
    for (const auto& op : g->ops)
      for (size_t i = 0; i < op.in.size(); ++i)
        if (op.in[i] == input) uses.push_back(op.variant * 4 + static_cast<int>(i));
    for (int o : g->outputs)
      if (o == input) uses.push_back(-1);
  }
  std::sort(uses.begin(), uses.end());
  return uses;
}

// The least serialization over the labellings that order the used inputs by signature,
// then (where `by_uses`) by their uses, trying every order of the inputs tied on both.
std::string LeastSerialization(const PRule& r, bool by_uses, CanonicalOrder* op_order) {
  thread_local Scratch k;
  std::vector<int>& used = k.used;
  UsedInputsInto(r, k.seen, used);
  std::vector<Uses>& uses = k.uses;
  uses.assign(r.input_sigs.size(), Uses());
  if (by_uses)
    for (int u : used) uses[u] = UsesOf(r, u);
  std::sort(used.begin(), used.end(), [&](int x, int y) {
    return std::tie(r.input_sigs[x], uses[x], x) < std::tie(r.input_sigs[y], uses[y], y);
  });
  // Every order of the inputs within each class of ties: an odometer over the classes'
  // permutations, the last class turning fastest.
  std::vector<std::pair<size_t, size_t>>& classes = k.classes;
  classes.clear();
  for (size_t i = 0; i < used.size();) {
    size_t j = i;
    while (j < used.size() && r.input_sigs[used[j]] == r.input_sigs[used[i]] && uses[used[j]] == uses[used[i]]) ++j;
    classes.push_back({i, j});
    i = j;
  }
  k.best.clear();
  k.order = used;  // sorted within each class: every class at its first permutation
  k.label.assign(r.input_sigs.size(), 0);
  while (true) {
    for (size_t i = 0; i < k.order.size(); ++i) k.label[k.order[i]] = static_cast<int>(i);
    const std::string before = op_order ? k.best : std::string();
    OfferLabelling(r, k, op_order != nullptr);
    if (op_order && k.best != before) *op_order = k.current;
    size_t c = classes.size();
    while (c > 0 &&
           !std::next_permutation(k.order.begin() + classes[c - 1].first, k.order.begin() + classes[c - 1].second))
      --c;  // that class wrapped round to its first permutation; turn the one before
    if (c == 0) break;
  }
  std::string out;
  out.reserve(3 * used.size() + 1 + k.best.size());
  for (int u : used) absl::StrAppend(&out, SigText(r.input_sigs[u]), " ");
  out += '#';
  out += k.best;
  return out;
}

}  // namespace

std::string Canonical(const PRule& r, CanonicalOrder* op_order) { return LeastSerialization(r, false, op_order); }

std::string FormIdentity(const PRule& r) { return LeastSerialization(r, true, nullptr); }

PGraph ToPGraph(const OpSet& set, const GraphCode& code, const std::vector<int>& outputs, const uint8_t* op_outputs) {
  PGraph g;
  for (int o = 0; o < code.num_ops; ++o) {
    const GenOp& op = code.ops[o];
    PGraph::Op p{op.variant, {}, op_outputs[o]};
    for (int i = 0; i < set.variants[op.variant].spec.arity; ++i) p.in.push_back(op.in[i]);
    g.ops.push_back(std::move(p));
  }
  g.outputs = outputs;
  return g;
}

PGraph Rebuild(const PGraph& g, int old_inputs, int new_inputs, int removed, const std::vector<int>& stand_in,
               std::vector<int>* id_map) {
  std::vector<int> map;
  for (int i = 0; i < old_inputs; ++i) map.push_back(i);
  int next = new_inputs;
  for (size_t o = 0; o < g.ops.size(); ++o)
    for (int k = 0; k < g.ops[o].outputs; ++k) map.push_back(static_cast<int>(o) == removed ? stand_in[k] : next++);
  PGraph out;
  for (size_t o = 0; o < g.ops.size(); ++o) {
    if (static_cast<int>(o) == removed) continue;
    PGraph::Op op = g.ops[o];
    for (int& i : op.in) i = map[i];
    out.ops.push_back(op);
  }
  for (int o : g.outputs) out.outputs.push_back(map[o]);
  if (id_map) *id_map = map;
  return out;
}

int FirstOutput(const PGraph& g, int num_inputs, size_t op) {
  int t = num_inputs;
  for (size_t o = 0; o < op; ++o) t += g.ops[o].outputs;
  return t;
}

bool OutputsAreSinks(const PGraph& g, int num_inputs) {
  std::vector<int> sinks = Sinks(g, num_inputs), outs = g.outputs;
  std::sort(outs.begin(), outs.end());
  if (g.ops.empty()) return true;
  return sinks == outs;
}

}  // namespace taso::gen
