#include "rule_finder.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "replay.h"
#include "taso/rng.h"

namespace taso::gen {
namespace {

// ---------------------------------------------------------------- confirmation

bool Close(const Tensor<float>& a, const Tensor<float>& b) {
  if (a.shape != b.shape) return false;
  float scale = 1;
  for (float v : a.data) scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < a.data.size(); ++i)
    if (!(std::fabs(a.data[i] - b.data[i]) <= 1e-4f * scale)) return false;
  return true;
}

// Random inputs. Pattern 0: all in [-1, 1]. The others give inputs one sign each
// (activations negative and weights positive, the reverse, alternating by input, or all
// negative), which
// breaks equalities that hold only with high probability on small mixed-sign tensors: max
// pooling of a convolution is almost never negative everywhere, but can be.
std::vector<Tensor<float>> FloatInputs(const OpSet& set, const std::vector<Shape>& shapes, uint64_t seed,
                                       int pattern) {
  Rng rng(seed);
  std::vector<Tensor<float>> out;
  for (size_t i = 0; i < shapes.size(); ++i) {
    bool negative = false;
    switch (pattern % 6) {
      case 1: negative = set.inputs[i].activation; break;
      case 2: negative = !set.inputs[i].activation; break;
      case 3: negative = i % 2 == 0; break;
      case 4: negative = i % 2 == 1; break;
      case 5: negative = true; break;
    }
    const double lo = pattern % 6 == 0 ? -1 : (negative ? -1 : 0.05);
    const double hi = pattern % 6 == 0 ? 1 : (negative ? -0.05 : 1);
    Tensor<float> t(shapes[i]);
    for (float& v : t.data) v = static_cast<float>(rng.Uniform(lo, hi));
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<Shape> InputShapes(const OpSet& set) {
  std::vector<Shape> s;
  for (const GenInput& in : set.inputs) s.push_back(in.shape);
  return s;
}

// Do the two graphs compute equal outputs on float inputs of these shapes? Both must be
// defined for them; `defined` tells whether they were.
bool SameOnFloats(const OpSet& set, const Candidate& c, const std::vector<Shape>& shapes, int cases, uint64_t seed,
                  bool* defined, int first_pattern = 0) {
  *defined = false;
  for (int t = 0; t < cases; ++t) {
    const int k = first_pattern + t;  // the one-signed patterns once each, then mixed signs
    auto inputs = FloatInputs(set, shapes, seed + 977 * t, k < 6 ? k : 0);
    auto ra = Replay<float>(set, c.a, inputs);
    auto rb = Replay<float>(set, c.b, inputs);
    if (!ra.ok() || !rb.ok()) return false;
    *defined = true;
    for (size_t i = 0; i < c.a_outputs.size(); ++i)
      if (!Close(ra->tensors[c.a_outputs[i]], rb->tensors[c.b_outputs[i]])) return false;
  }
  return true;
}

struct Decoded {
  GraphCode code;
  std::vector<int> outputs;
  std::vector<uint64_t> hashes;  // per output
};

}  // namespace

std::vector<Candidate> ConfirmCandidates(const Enumerator& e, const std::vector<Fingerprinted>& groups, int threads,
                                         int test_cases) {
  // Group boundaries.
  std::vector<std::pair<size_t, size_t>> ranges;
  for (size_t i = 0; i < groups.size();) {
    size_t j = i;
    while (j < groups.size() && groups[j].fingerprint == groups[i].fingerprint) ++j;
    if (j - i >= 2) ranges.push_back({i, j});
    i = j;
  }
  const std::vector<Shape> shapes = InputShapes(e.op_set());
  std::vector<std::vector<Candidate>> found(std::max(1, threads));
  std::atomic<size_t> next{0};
  auto work = [&](int t) {
    for (size_t r; (r = next.fetch_add(1)) < ranges.size();) {
      std::vector<Decoded> graphs;
      for (size_t i = ranges[r].first; i < ranges[r].second; ++i) {
        auto rep = Replay<uint32_t>(e.op_set(), groups[i].graph, e.inputs());
        if (!rep.ok()) continue;
        Decoded d{groups[i].graph, rep->outputs, {}};
        for (int o : rep->outputs) d.hashes.push_back(TensorHash(rep->tensors[o]));
        graphs.push_back(std::move(d));
      }
      // Every pair in small groups; in large ones, each graph with the smallest.
      const size_t n = graphs.size();
      for (size_t i = 0; i < n; ++i)
        for (size_t j = i + 1; j < n; ++j) {
          if (n > 6 && i > 0) break;
          const Decoded& a = graphs[i];
          const Decoded& b = graphs[j];
          if (a.outputs.size() != b.outputs.size()) continue;
          Candidate c{a.code, b.code, a.outputs, {}};
          std::vector<bool> taken(b.outputs.size(), false);
          for (size_t k = 0; k < a.outputs.size(); ++k)
            for (size_t m = 0; m < b.outputs.size(); ++m)
              if (!taken[m] && a.hashes[k] == b.hashes[m]) {
                taken[m] = true;
                c.b_outputs.push_back(b.outputs[m]);
                break;
              }
          if (c.b_outputs.size() != a.outputs.size()) continue;
          bool defined;
          if (SameOnFloats(e.op_set(), c, shapes, test_cases, 1234, &defined)) found[t].push_back(std::move(c));
        }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < std::max(1, threads); ++t) pool.emplace_back(work, t);
  for (auto& th : pool) th.join();
  std::vector<Candidate> all;
  for (auto& v : found) all.insert(all.end(), v.begin(), v.end());
  // Threads finish in any order; the result must not depend on it.
  auto bytes = [](const Candidate& c) {
    std::string s(reinterpret_cast<const char*>(&c.a), sizeof(GraphCode));
    s.append(reinterpret_cast<const char*>(&c.b), sizeof(GraphCode));
    return s;
  };
  std::sort(all.begin(), all.end(), [&](const Candidate& x, const Candidate& y) { return bytes(x) < bytes(y); });
  return all;
}

namespace {

// ---------------------------------------------------------------- canonical forms

// A rule as plain data: tensor ids are the inputs 0..n-1, then each graph's operator
// outputs in order.
struct PGraph {
  struct Op {
    int variant;
    std::vector<int> in;
    int outputs;
  };
  std::vector<Op> ops;
  std::vector<int> outputs;
};
struct PRule {
  std::vector<std::string> input_sigs;  // per input: its shape and kind
  PGraph a, b;
};

// What a rule input is, for telling renamings apart: rules are shape-agnostic, so its
// rank and whether it is an activation or a weight, not its example shape.
std::string Signature(const Shape& s, bool activation) { return absl::StrCat(s.size(), activation ? "a" : "w"); }

// Serializes a graph in its canonical operator order under an input labelling.
std::string Serialize(const PGraph& g, int num_inputs, const std::vector<int>& label, std::vector<int>* canon_out) {
  std::vector<int> canon(num_inputs, -1);
  for (int i = 0; i < num_inputs; ++i) canon[i] = label[i];
  int next_id = static_cast<int>(*std::max_element(label.begin(), label.end())) + 1;
  std::vector<int> first_output(g.ops.size());
  int t = num_inputs;
  for (size_t o = 0; o < g.ops.size(); ++o) {
    first_output[o] = t;
    t += g.ops[o].outputs;
  }
  canon.resize(t, -1);
  std::vector<bool> placed(g.ops.size(), false);
  std::string s;
  for (size_t step = 0; step < g.ops.size(); ++step) {
    int best = -1;
    std::vector<int> best_key;
    for (size_t o = 0; o < g.ops.size(); ++o) {
      if (placed[o]) continue;
      std::vector<int> key = {g.ops[o].variant};
      bool ready = true;
      for (int in : g.ops[o].in) {
        if (canon[in] < 0) ready = false;
        key.push_back(canon[in]);
      }
      if (ready && (best < 0 || key < best_key)) {
        best = static_cast<int>(o);
        best_key = key;
      }
    }
    placed[best] = true;
    for (int k = 0; k < g.ops[best].outputs; ++k) canon[first_output[best] + k] = next_id++;
    absl::StrAppend(&s, absl::StrJoin(best_key, ","), ";");
  }
  *canon_out = canon;
  return s;
}

std::string CanonicalWith(const PRule& r, const std::vector<int>& label) {
  std::vector<int> ca, cb;
  const int n = static_cast<int>(r.input_sigs.size());
  std::string sa = Serialize(r.a, n, label, &ca);
  std::string sb = Serialize(r.b, n, label, &cb);
  std::vector<std::pair<int, int>> ab, ba;
  for (size_t i = 0; i < r.a.outputs.size(); ++i) {
    ab.push_back({ca[r.a.outputs[i]], cb[r.b.outputs[i]]});
    ba.push_back({cb[r.b.outputs[i]], ca[r.a.outputs[i]]});
  }
  std::sort(ab.begin(), ab.end());
  std::sort(ba.begin(), ba.end());
  auto outs = [](const std::vector<std::pair<int, int>>& v) {
    std::string s;
    for (auto [x, y] : v) absl::StrAppend(&s, x, "=", y, ",");
    return s;
  };
  std::string x = absl::StrCat(sa, "|", sb, "|", outs(ab));
  std::string y = absl::StrCat(sb, "|", sa, "|", outs(ba));
  return std::min(x, y);
}

std::vector<int> UsedInputs(const PRule& r) {
  const int n = static_cast<int>(r.input_sigs.size());
  std::vector<bool> used(n, false);
  for (const PGraph* g : {&r.a, &r.b}) {
    for (const auto& op : g->ops)
      for (int i : op.in)
        if (i < n) used[i] = true;
    for (int o : g->outputs)
      if (o < n) used[o] = true;
  }
  std::vector<int> out;
  for (int i = 0; i < n; ++i)
    if (used[i]) out.push_back(i);
  return out;
}

// The canonical string of a rule, the same for every renaming of its inputs.
std::string Canonical(const PRule& r) {
  std::vector<int> used = UsedInputs(r);
  std::sort(used.begin(), used.end(), [&](int x, int y) {
    return std::tie(r.input_sigs[x], x) < std::tie(r.input_sigs[y], y);
  });
  std::string sigs;
  for (int u : used) absl::StrAppend(&sigs, r.input_sigs[u], " ");
  // Try every order of the inputs within each class of equal signatures.
  std::vector<std::pair<size_t, size_t>> classes;
  for (size_t i = 0; i < used.size();) {
    size_t j = i;
    while (j < used.size() && r.input_sigs[used[j]] == r.input_sigs[used[i]]) ++j;
    classes.push_back({i, j});
    i = j;
  }
  std::string best;
  std::vector<int> order = used;
  std::function<void(size_t)> rec = [&](size_t c) {
    if (c == classes.size()) {
      std::vector<int> label(r.input_sigs.size(), 0);
      for (size_t i = 0; i < order.size(); ++i) label[order[i]] = static_cast<int>(i);
      std::string s = CanonicalWith(r, label);
      if (best.empty() || s < best) best = std::move(s);
      return;
    }
    auto [lo, hi] = classes[c];
    std::sort(order.begin() + lo, order.begin() + hi);
    do rec(c + 1);
    while (std::next_permutation(order.begin() + lo, order.begin() + hi));
  };
  rec(0);
  return sigs + "#" + best;
}

PGraph ToPGraph(const OpSet& set, const GraphCode& code, const std::vector<int>& outputs,
                const std::vector<int>& op_outputs) {
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

// Output counts per operator and the shape and kind of every tensor, from a replay.
struct Facts {
  std::vector<int> op_outputs;
  std::vector<Shape> shapes;
  std::vector<bool> activation;
};

Facts FactsOf(const Enumerator& e, const GraphCode& code) {
  Facts f;
  auto rep = Replay<uint32_t>(e.op_set(), code, e.inputs());
  const auto& set = e.op_set();
  for (const GenInput& in : set.inputs) f.activation.push_back(in.activation);
  for (const auto& t : rep->tensors) f.shapes.push_back(t.shape);
  for (int o = 0; o < code.num_ops; ++o) {
    const int first = rep->first_output[o];
    const int end = o + 1 < code.num_ops ? rep->first_output[o + 1] : static_cast<int>(rep->tensors.size());
    f.op_outputs.push_back(end - first);
    const Variant& var = set.variants[code.ops[o].variant];
    bool act = false;
    for (int i = 0; i < var.spec.arity; ++i) act |= f.activation[code.ops[o].in[i]];
    for (int k = first; k < end; ++k) f.activation.push_back(act && !var.spec.constant_output);
  }
  return f;
}

// Rebuilds a graph without operator `removed`, for `new_inputs` inputs (the first
// `old_inputs` keep their ids); the removed operator's k-th output becomes stand_in[k].
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

bool OutputsAreSinks(const PGraph& g, int num_inputs) {
  std::vector<int> sinks = Sinks(g, num_inputs), outs = g.outputs;
  std::sort(outs.begin(), outs.end());
  if (g.ops.empty()) return true;
  return sinks == outs;
}

// ---------------------------------------------------------------- the rules' sizes

// Does the candidate hold at other sizes? Inputs get new dimensions, all of one old value
// alike or each on its own; every trial where both graphs are defined must agree.
bool HoldsAtOtherSizes(const Enumerator& e, const Candidate& c, uint64_t seed) {
  const OpSet& set = e.op_set();
  Rng rng(seed);
  // Each class of dimensions grows by its own amount; kernel sizes by 0 or 2 each (they
  // stay odd), so the trials keep the rule well-typed but change what coincidences need.
  // The first trials map every size value alike (so sizes equal by coincidence stay
  // equal; odd stays odd), the rest grow each class of dimensions on its own.
  static const std::vector<std::map<int64_t, int64_t>> kValueMaps = {
      {{1, 1}, {3, 3}, {4, 6}, {5, 7}}, {{1, 3}, {3, 5}, {4, 8}, {5, 9}}, {{1, 2}, {3, 3}, {4, 2}, {5, 6}}};
  for (int trial = 0; trial < 27; ++trial) {
    std::map<std::string, int64_t> grow;
    for (const char* cls : {"n", "c", "h", "w", "m"}) grow[cls] = static_cast<int64_t>(rng.Next() % 5);
    std::vector<Shape> shapes;
    for (const GenInput& in : set.inputs) {
      Shape s = in.shape;
      for (size_t d = 0; d < s.size(); ++d) {
        if (trial < 3) s[d] = kValueMaps[trial].count(s[d]) ? kValueMaps[trial].at(s[d]) : s[d];
        else s[d] += in.dim_classes[d] == "k" ? 2 * static_cast<int64_t>(rng.Next() % 2) : grow[in.dim_classes[d]];
      }
      shapes.push_back(s);
    }
    // Value-map trials run mixed signs and then each one-signed pattern; the others one
    // pattern each, alternating mixed and one-signed.
    const int cases = trial < 3 ? 6 : 1;
    const int pattern = trial < 3 || trial % 2 == 0 ? 0 : 1 + (trial / 2) % 5;
    bool defined;
    if (!SameOnFloats(set, c, shapes, cases, seed + trial, &defined, pattern) && defined) return false;
  }
  return true;
}

// ---------------------------------------------------------------- rules

Rule ToRule(const Enumerator& e, const Candidate& c, const std::string& name) {
  const OpSet& set = e.op_set();
  const int n = static_cast<int>(set.inputs.size());
  auto ra = Replay<uint32_t>(set, c.a, e.inputs());
  auto rb = Replay<uint32_t>(set, c.b, e.inputs());
  // The rule's inputs: those either graph reads, in order.
  std::vector<bool> used(n, false);
  for (const GraphCode* g : {&c.a, &c.b}) {
    for (int o = 0; o < g->num_ops; ++o)
      for (int i = 0; i < set.variants[g->ops[o].variant].spec.arity; ++i)
        if (g->ops[o].in[i] < n) used[g->ops[o].in[i]] = true;
    if (g->num_ops == 0) used[g->lone_input] = true;
  }
  std::vector<int> input_id(n, -1);
  Rule rule;
  rule.name = name;
  for (int i = 0; i < n; ++i)
    if (used[i]) {
      input_id[i] = static_cast<int>(rule.inputs.size());
      rule.inputs.push_back({set.inputs[i].name, set.inputs[i].shape, !set.inputs[i].activation});
    }
  const int rule_inputs = static_cast<int>(rule.inputs.size());
  auto side = [&](const GraphCode& code, const Replayed<uint32_t>& rep, const std::vector<int>& outputs) {
    RuleGraph g;
    std::vector<int> id(rep.tensors.size(), -1);
    for (int i = 0; i < n; ++i) id[i] = input_id[i];
    int next = rule_inputs;
    for (int t = n; t < static_cast<int>(rep.tensors.size()); ++t) id[t] = next++;
    for (int o = 0; o < code.num_ops; ++o) {
      const Variant& var = set.variants[code.ops[o].variant];
      RuleOp op;
      op.op = var.op;
      op.params = var.spec.params;
      for (int i = 0; i < var.spec.arity; ++i) op.inputs.push_back(id[code.ops[o].in[i]]);
      const int end = o + 1 < code.num_ops ? rep.first_output[o + 1] : static_cast<int>(rep.tensors.size());
      op.num_outputs = end - rep.first_output[o];
      if (var.spec.split_at_concat) {
        const int axis = CutAxis(var.spec);
        const DimNode& cut = rep.nodes[rep.dims[code.ops[o].in[0]][axis]];
        for (int part : {cut.left, cut.right}) {
          std::vector<DimNode> leaves;
          Leaves(rep.nodes, part, leaves);
          SymbolicSize size;
          for (const DimNode& l : leaves) size.push_back({id[l.tensor], l.dim});
          op.sizes[kCutSizesParam].push_back(size);
        }
      }
      g.ops.push_back(std::move(op));
    }
    for (int o : outputs) g.outputs.push_back(id[o]);
    return g;
  };
  rule.source = side(c.a, *ra, c.a_outputs);
  rule.target = side(c.b, *rb, c.b_outputs);
  return rule;
}

}  // namespace

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
      if (value_use[v] && set.inputs[v].shape == set.inputs[u].shape && set.inputs[v].activation == set.inputs[u].activation) {
        for (GraphCode* g : {&c.a, &c.b})
          for (int o = 0; o < g->num_ops; ++o)
            for (uint8_t& i : g->ops[o].in)
              if (i == u) i = static_cast<uint8_t>(v);
        break;
      }
  }
  return c;
}

std::vector<Rule> MakeRules(const Enumerator& e, const std::vector<Candidate>& raw, PruneCounts* counts) {
  const OpSet& set = e.op_set();
  const int n = static_cast<int>(set.inputs.size());
  counts->candidates = raw.size();
  std::vector<Candidate> candidates;
  for (const Candidate& c : raw) candidates.push_back(NormalizeShapeOnlyInputs(set, c));

  struct Entry {
    size_t candidate;
    std::vector<size_t> members;  // every candidate with this canonical form
    PRule rule;
    std::vector<Shape> shapes_a, shapes_b;  // per tensor
    std::vector<bool> act_a, act_b;
    bool alive = true;
  };
  std::map<std::string, Entry> rules;  // canonical form -> first candidate with it
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    Facts fa = FactsOf(e, c.a), fb = FactsOf(e, c.b);
    PRule r;
    for (const GenInput& in : set.inputs) r.input_sigs.push_back(Signature(in.shape, in.activation));
    r.a = ToPGraph(set, c.a, c.a_outputs, fa.op_outputs);
    r.b = ToPGraph(set, c.b, c.b_outputs, fb.op_outputs);
    std::string key = Canonical(r);
    auto it = rules.find(key);
    if (it == rules.end())
      it = rules.emplace(key, Entry{i, {}, std::move(r), fa.shapes, fb.shapes, fa.activation, fb.activation, true}).first;
    it->second.members.push_back(i);
  }
  // Input renaming: a rule that is another with two inputs merged is less general.
  for (auto& [key, entry] : rules) {
    const PRule& r = entry.rule;
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
        auto it = rules.find(Canonical(merged));
        if (it != rules.end() && it->first != key) it->second.alive = false;
      }
  }
  auto count_alive = [&] {
    size_t k = 0;
    for (auto& [key, entry] : rules) k += entry.alive;
    return k;
  };
  counts->after_renaming = count_alive();

  // Rules that held only because of the generator's particular sizes.
  {
    std::vector<Entry*> alive;
    for (auto& [key, entry] : rules)
      if (entry.alive) alive.push_back(&entry);
    std::atomic<size_t> next{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < 2; ++t)
      pool.emplace_back([&] {
        for (size_t k; (k = next.fetch_add(1)) < alive.size();) {
          // A rule is shape-agnostic: it must hold whatever sizes it is found with (for
          // example the kernels of several sizes it stands for), so check a few.
          const auto& members = alive[k]->members;
          for (size_t m = 0; m < members.size() && m < 4; ++m)
            if (!HoldsAtOtherSizes(e, candidates[members[m]], 99 + k)) alive[k]->alive = false;
        }
      });
    for (auto& th : pool) th.join();
    for (auto& [key, entry] : rules)
      if (!entry.alive) entry.rule = PRule{};  // no longer a witness for anything
  }
  counts->after_size_check = count_alive();
  auto alive_key = [&](const std::string& k) {
    auto it = rules.find(k);
    return it != rules.end() && it->second.alive;
  };

  // Common subgraphs. Form 1: an operator both graphs apply to the same inputs becomes a
  // fresh input. Form 2: an operator producing outputs in both graphs is peeled off.
  std::vector<std::string> pruned;
  for (auto& [key, entry] : rules) {
    if (!entry.alive) continue;
    const PRule& r = entry.rule;
    bool redundant = false;
    for (size_t oa = 0; oa < r.a.ops.size() && !redundant; ++oa)
      for (size_t ob = 0; ob < r.b.ops.size() && !redundant; ++ob) {
        const auto& x = r.a.ops[oa];
        const auto& y = r.b.ops[ob];
        if (x.variant != y.variant || x.in != y.in) continue;
        if (std::any_of(x.in.begin(), x.in.end(), [&](int i) { return i >= n; })) continue;
        // Form 1: the common operator's outputs become fresh inputs.
        PRule g;
        g.input_sigs = r.input_sigs;
        const int ta = FirstOutput(r.a, n, oa);
        std::vector<int> fresh;
        for (int k = 0; k < x.outputs; ++k) {
          fresh.push_back(static_cast<int>(g.input_sigs.size()));
          g.input_sigs.push_back(Signature(entry.shapes_a[ta + k], entry.act_a[ta + k]));
        }
        const int m = static_cast<int>(g.input_sigs.size());
        g.a = Rebuild(r.a, n, m, static_cast<int>(oa), fresh, nullptr);
        g.b = Rebuild(r.b, n, m, static_cast<int>(ob), fresh, nullptr);
        if (OutputsAreSinks(g.a, m) && OutputsAreSinks(g.b, m) && alive_key(Canonical(g))) redundant = true;
      }
    // Form 2: peel an operator whose outputs are outputs of both graphs.
    for (size_t oa = 0; oa < r.a.ops.size() && !redundant; ++oa)
      for (size_t ob = 0; ob < r.b.ops.size() && !redundant; ++ob) {
        const auto& x = r.a.ops[oa];
        const auto& y = r.b.ops[ob];
        if (x.variant != y.variant || x.outputs != y.outputs) continue;
        const int ta = FirstOutput(r.a, n, oa), tb = FirstOutput(r.b, n, ob);
        // Every output of x must be mapped to the same-numbered output of y.
        std::vector<size_t> peeled;
        for (int k = 0; k < x.outputs; ++k)
          for (size_t p = 0; p < r.a.outputs.size(); ++p)
            if (r.a.outputs[p] == ta + k && r.b.outputs[p] == tb + k) peeled.push_back(p);
        if (static_cast<int>(peeled.size()) != x.outputs) continue;
        PRule g;
        g.input_sigs = r.input_sigs;
        std::vector<int> gone(x.outputs, -1), map_a, map_b;
        g.a = Rebuild(r.a, n, n, static_cast<int>(oa), gone, &map_a);
        g.b = Rebuild(r.b, n, n, static_cast<int>(ob), gone, &map_b);
        // New outputs: the other pairs, then the peeled operators' inputs pairwise.
        g.a.outputs.clear();
        g.b.outputs.clear();
        for (size_t p = 0; p < r.a.outputs.size(); ++p)
          if (std::find(peeled.begin(), peeled.end(), p) == peeled.end()) {
            g.a.outputs.push_back(map_a[r.a.outputs[p]]);
            g.b.outputs.push_back(map_b[r.b.outputs[p]]);
          }
        for (size_t i = 0; i < x.in.size(); ++i) {
          const int ia = map_a[x.in[i]], ib = map_b[y.in[i]];
          if (ia == ib && ia < n) continue;  // the same input on both sides: nothing to state
          g.a.outputs.push_back(ia);
          g.b.outputs.push_back(ib);
        }
        if (g.a.outputs.empty() || !OutputsAreSinks(g.a, n) || !OutputsAreSinks(g.b, n)) continue;
        if (alive_key(Canonical(g))) redundant = true;
      }
    if (redundant) pruned.push_back(key);
  }
  for (const auto& k : pruned) rules[k].alive = false;
  counts->after_common_subgraph = count_alive();

  // Deterministic order: fewer operators first, then the canonical form.
  std::vector<std::pair<std::pair<int, std::string>, size_t>> order;
  for (auto& [key, entry] : rules)
    if (entry.alive) {
      const Candidate& c = candidates[entry.candidate];
      order.push_back({{c.a.num_ops + c.b.num_ops, key}, entry.candidate});
    }
  std::sort(order.begin(), order.end());
  std::vector<Rule> out;
  for (size_t i = 0; i < order.size(); ++i) {
    char name[16];
    std::snprintf(name, sizeof(name), "r%04zu", i);
    out.push_back(ToRule(e, candidates[order[i].second], name));
  }
  return out;
}

}  // namespace taso::gen
