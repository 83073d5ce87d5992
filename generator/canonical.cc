#include "canonical.h"

#include <algorithm>
#include <array>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace taso::gen {
namespace {

// Serializes a graph in its canonical operator order under an input labelling: at each
// step the ready operator with the smallest (variant, input labels). One byte per token
// (variants and labels are below 255; 255 ends an operator), so keys are short.
std::string Serialize(const PGraph& g, int num_inputs, const std::vector<int>& label, std::vector<int>* canon,
                      std::vector<int>* op_order) {
  op_order->clear();
  int next_id = *std::max_element(label.begin(), label.end()) + 1;
  int t = num_inputs;
  std::vector<int> first_output(g.ops.size());
  for (size_t o = 0; o < g.ops.size(); ++o) {
    first_output[o] = t;
    t += g.ops[o].outputs;
  }
  canon->assign(t, -1);
  std::copy(label.begin(), label.begin() + num_inputs, canon->begin());
  std::vector<bool> placed(g.ops.size(), false);
  std::string s;
  for (size_t step = 0; step < g.ops.size(); ++step) {
    int best = -1;
    std::array<int, 4> best_key{};
    for (size_t o = 0; o < g.ops.size(); ++o) {
      if (placed[o] || g.ops[o].in.size() > 3) continue;
      std::array<int, 4> key = {g.ops[o].variant, -1, -1, -1};
      bool ready = true;
      for (size_t i = 0; i < g.ops[o].in.size(); ++i) {
        key[i + 1] = (*canon)[g.ops[o].in[i]];
        ready &= key[i + 1] >= 0;
      }
      if (ready && (best < 0 || key < best_key)) {
        best = static_cast<int>(o);
        best_key = key;
      }
    }
    placed[best] = true;
    op_order->push_back(best);
    for (int k = 0; k < g.ops[best].outputs; ++k) (*canon)[first_output[best] + k] = next_id++;
    for (int v : best_key)
      if (v >= 0) s.push_back(static_cast<char>(v));
    s.push_back(static_cast<char>(255));
  }
  return s;
}

std::string CanonicalWith(const PRule& r, const std::vector<int>& label, CanonicalOrder* order) {
  thread_local std::vector<int> ca, cb;
  CanonicalOrder o;
  const int n = static_cast<int>(r.input_sigs.size());
  std::string sa = Serialize(r.a, n, label, &ca, &o.first);
  std::string sb = Serialize(r.b, n, label, &cb, &o.second);
  std::vector<std::pair<int, int>> ab, ba;
  for (size_t i = 0; i < r.a.outputs.size(); ++i) {
    ab.push_back({ca[r.a.outputs[i]], cb[r.b.outputs[i]]});
    ba.push_back({cb[r.b.outputs[i]], ca[r.a.outputs[i]]});
  }
  std::sort(ab.begin(), ab.end());
  std::sort(ba.begin(), ba.end());
  auto join = [](const std::string& first, const std::string& second, const std::vector<std::pair<int, int>>& outs) {
    std::string s = first;
    s.push_back(static_cast<char>(254));
    s += second;
    s.push_back(static_cast<char>(254));
    for (auto [x, y] : outs) {
      s.push_back(static_cast<char>(x));
      s.push_back(static_cast<char>(y));
    }
    return s;
  };
  std::string x = join(sa, sb, ab), y = join(sb, sa, ba);
  o.swapped = y < x;
  if (o.swapped) std::swap(o.first, o.second);
  *order = std::move(o);
  return std::min(x, y);
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

std::string Signature(const Shape& s, bool activation) { return absl::StrCat(s.size(), activation ? "a" : "w"); }

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

std::string Canonical(const PRule& r, CanonicalOrder* op_order) {
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
      CanonicalOrder o;
      std::string s = CanonicalWith(r, label, &o);
      if (best.empty() || s < best) {
        best = std::move(s);
        if (op_order) *op_order = std::move(o);
      }
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
