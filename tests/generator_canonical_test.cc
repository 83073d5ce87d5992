// Canonical strings of candidate rules (taso-gen, TASO section 2.5): a renaming of the
// inputs within their signatures changes neither the canonical string nor the form
// identity, and two rules share one exactly when they share the other.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "canonical.h"

using namespace taso;

namespace {

// Arity and output count of each made-up variant: what Canonical reads of an operator.
constexpr int kArity[] = {1, 2, 2, 3};
constexpr int kOutputs[] = {1, 1, 2, 1};

// A graph of `ops` operators on `num_inputs` inputs, each reading tensors made before it;
// its outputs are the tensors nothing reads.
gen::PGraph RandomGraph(std::mt19937& rng, int num_inputs, int ops, int variants) {
  gen::PGraph g;
  int tensors = num_inputs;
  for (int o = 0; o < ops; ++o) {
    gen::PGraph::Op op;
    op.variant = static_cast<int>(rng() % variants);
    for (int i = 0; i < kArity[op.variant]; ++i) op.in.push_back(static_cast<int>(rng() % tensors));
    op.outputs = kOutputs[op.variant];
    tensors += op.outputs;
    g.ops.push_back(op);
  }
  std::vector<bool> read(tensors, false);
  for (const auto& op : g.ops)
    for (int i : op.in) read[i] = true;
  for (int t = num_inputs; t < tensors; ++t)
    if (!read[t]) g.outputs.push_back(t);
  return g;
}

gen::PRule RandomRule(std::mt19937& rng, const std::vector<gen::Sig>& sigs, int max_ops, int variants) {
  gen::PRule r;
  r.input_sigs.assign(sigs.begin(), sigs.end());
  const int n = static_cast<int>(sigs.size());
  r.a = RandomGraph(rng, n, 1 + static_cast<int>(rng() % max_ops), variants);
  r.b = RandomGraph(rng, n, 1 + static_cast<int>(rng() % max_ops), variants);
  const size_t outputs = std::min(r.a.outputs.size(), r.b.outputs.size());
  r.a.outputs.resize(outputs);
  r.b.outputs.resize(outputs);
  return r;
}

// The rule with its inputs permuted at random within each class of equal signatures.
gen::PRule Renamed(std::mt19937& rng, const gen::PRule& r) {
  const int n = static_cast<int>(r.input_sigs.size());
  std::vector<int> to(n);
  std::map<gen::Sig, std::vector<int>> classes;
  for (int i = 0; i < n; ++i) classes[r.input_sigs[i]].push_back(i);
  for (auto& [sig, members] : classes) {
    std::vector<int> image = members;
    std::shuffle(image.begin(), image.end(), rng);
    for (size_t k = 0; k < members.size(); ++k) to[members[k]] = image[k];
  }
  gen::PRule out = r;
  for (gen::PGraph* g : {&out.a, &out.b}) {
    for (auto& op : g->ops)
      for (int& i : op.in)
        if (i < n) i = to[i];
    for (int& o : g->outputs)
      if (o < n) o = to[o];
  }
  return out;
}

const gen::Sig k4a = gen::Signature({1, 2, 3, 4}, true), k4w = gen::Signature({1, 2, 3, 4}, false),
               k2a = gen::Signature({3, 4}, true), k2w = gen::Signature({3, 4}, false);
const std::vector<gen::Sig> kSigs = {k4a, k4a, k4w, k4w, k4w, k4w, k2a, k2a, k2a};

}  // namespace

TEST_CASE("Renaming a rule's inputs within their signatures changes neither its canonical string nor its identity") {
  std::mt19937 rng(7);
  int differently_written = 0;
  for (int k = 0; k < 300; ++k) {
    const gen::PRule r = RandomRule(rng, kSigs, 4, 4);
    const std::string canonical = gen::Canonical(r), identity = gen::FormIdentity(r);
    for (int t = 0; t < 4; ++t) {
      const gen::PRule renamed = Renamed(rng, r);
      CHECK(gen::Canonical(renamed) == canonical);
      CHECK(gen::FormIdentity(renamed) == identity);
    }
    differently_written += identity != canonical;
  }
  // Identities are strings of their own (they order nothing): most differ from Canonical's.
  CHECK(differently_written > 0);
}

TEST_CASE("Two rules have the same form identity exactly when they have the same canonical string") {
  // Few inputs, operators and variants, so that many rules coincide up to renaming.
  std::mt19937 rng(11);
  const std::vector<gen::Sig> sigs = {k4w, k4w, k4w, k2a};
  std::map<std::string, std::set<std::string>> identities_by_canonical, canonicals_by_identity;
  size_t rules = 0;
  for (int k = 0; k < 10000; ++k) {
    const gen::PRule drawn = RandomRule(rng, sigs, 2, 3);
    if (drawn.a.outputs.empty()) continue;
    for (const gen::PRule& r : {drawn, Renamed(rng, drawn)}) {
      const std::string canonical = gen::Canonical(r), identity = gen::FormIdentity(r);
      identities_by_canonical[canonical].insert(identity);
      canonicals_by_identity[identity].insert(canonical);
      ++rules;
    }
  }
  for (const auto& [canonical, identities] : identities_by_canonical) CHECK(identities.size() == 1);
  for (const auto& [identity, canonicals] : canonicals_by_identity) CHECK(canonicals.size() == 1);
  // Not trivially so: rules did coincide, and many forms were apart.
  CHECK(identities_by_canonical.size() < rules * 3 / 4);
  CHECK(identities_by_canonical.size() > 100);
}

TEST_CASE("Input signatures order as their text does, which canonical strings are made of") {
  std::vector<gen::Sig> sigs;
  for (int rank = 0; rank <= 4; ++rank)
    for (bool activation : {true, false}) sigs.push_back(gen::Signature(Shape(rank, 2), activation));
  CHECK(gen::SigText(k2a) == "2a");
  CHECK(gen::SigText(k2w) == "2w");
  CHECK(gen::SigText(k4w) == "4w");
  for (gen::Sig x : sigs)
    for (gen::Sig y : sigs) {
      INFO(gen::SigText(x) << " against " << gen::SigText(y));
      CHECK((x < y) == (gen::SigText(x) < gen::SigText(y)));
      CHECK((x == y) == (gen::SigText(x) == gen::SigText(y)));
    }
}
