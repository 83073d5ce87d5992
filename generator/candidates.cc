#include "candidates.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <thread>

#include "replay.h"

namespace taso::gen {
namespace {

struct Decoded {
  GraphCode code;
  std::vector<int> outputs;
  std::vector<uint64_t> hashes;  // per output
  std::array<uint8_t, kMaxOps> op_outputs{};
};

// Pairs graphs i and j if every output of i has an output of j with the same hash.
bool Match(const Decoded& a, const Decoded& b, Candidate* c) {
  if (a.outputs.size() != b.outputs.size()) return false;
  *c = Candidate{a.code, b.code, a.outputs, {}, a.op_outputs, b.op_outputs};
  std::vector<bool> taken(b.outputs.size(), false);
  for (size_t k = 0; k < a.outputs.size(); ++k)
    for (size_t m = 0; m < b.outputs.size(); ++m)
      if (!taken[m] && a.hashes[k] == b.hashes[m]) {
        taken[m] = true;
        c->b_outputs.push_back(b.outputs[m]);
        break;
      }
  return c->b_outputs.size() == a.outputs.size();
}

constexpr size_t kMemoBytes = 32 << 20;  // per thread

}  // namespace

std::vector<Candidate> PairUp(const Enumerator& e, absl::Span<const Fingerprinted> groups, int threads) {
  std::vector<std::pair<size_t, size_t>> ranges;
  for (size_t i = 0; i < groups.size();) {
    size_t j = i;
    while (j < groups.size() && groups[j].fingerprint == groups[i].fingerprint) ++j;
    if (j - i >= 2) ranges.push_back({i, j});
    i = j;
  }
  threads = std::max(1, threads);
  std::vector<std::vector<Candidate>> found(threads);
  std::atomic<size_t> next{0};
  auto work = [&](int t) {
    KernelMemo<uint32_t> memo(e.inputs(), kMemoBytes);
    for (size_t r; (r = next.fetch_add(1)) < ranges.size();) {
      std::vector<Decoded> graphs;
      for (size_t i = ranges[r].first; i < ranges[r].second; ++i) {
        auto rep = Replay<uint32_t>(e.op_set(), groups[i].graph, e.inputs(), nullptr, &memo);
        if (!rep.ok()) continue;
        Decoded d{groups[i].graph, rep->outputs, {}, {}};
        for (int o : rep->outputs) d.hashes.push_back(TensorHash(rep->tensor(o)));
        for (int o = 0; o < d.code.num_ops; ++o) {
          const int end = o + 1 < d.code.num_ops ? rep->first_output[o + 1] : rep->num_tensors();
          d.op_outputs[o] = static_cast<uint8_t>(end - rep->first_output[o]);
        }
        graphs.push_back(std::move(d));
      }
      // Every pair in small groups; in large ones, each graph with the smallest (the
      // other pairs follow from those).
      const size_t n = graphs.size();
      for (size_t i = 0; i < n && (n <= 6 || i == 0); ++i)
        for (size_t j = i + 1; j < n; ++j) {
          Candidate c;
          if (Match(graphs[i], graphs[j], &c)) found[t].push_back(std::move(c));
        }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(work, t);
  for (auto& th : pool) th.join();
  std::vector<Candidate> all;
  for (auto& v : found) all.insert(all.end(), std::make_move_iterator(v.begin()), std::make_move_iterator(v.end()));
  // Threads finish in any order; the result must not depend on it.
  auto less = [](const Candidate& x, const Candidate& y) {
    if (int c = std::memcmp(&x.a, &y.a, sizeof(GraphCode))) return c < 0;
    return std::memcmp(&x.b, &y.b, sizeof(GraphCode)) < 0;
  };
  std::sort(all.begin(), all.end(), less);
  return all;
}

}  // namespace taso::gen
