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
  GraphCode code;  // without the walk's summary: candidates are compared and kept as codes
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

constexpr size_t kCandidateMemoBytes = 32 << 20;  // per thread

// The [begin, end) ranges of `groups` that share a fingerprint, two graphs or more.
std::vector<std::pair<size_t, size_t>> SharedRanges(absl::Span<const Fingerprinted> groups) {
  std::vector<std::pair<size_t, size_t>> ranges;
  for (size_t i = 0; i < groups.size();) {
    size_t j = i;
    while (j < groups.size() && groups[j].fingerprint == groups[i].fingerprint) ++j;
    if (j - i >= 2) ranges.push_back({i, j});
    i = j;
  }
  return ranges;
}

GraphCode WithoutSummary(GraphCode code) {
  code.two_output_ops = code.output_ranks = 0;
  return code;
}

// A graph's outputs, their order by hash and each operator's output count from the
// summary the walk left in its code (SetOutputSummary): in place of the outputs' hashes,
// their ranks, which pair outputs as the hashes would between graphs whose outputs have
// the same hashes, as graphs with one fingerprint do.
Decoded FromSummary(const OpSet& set, int num_inputs, const GraphCode& code) {
  Decoded d{WithoutSummary(code), {}, {}, {}};
  std::array<bool, 256> read{};  // by tensor id (a byte)
  int tensors = num_inputs;
  for (int o = 0; o < code.num_ops; ++o) {
    d.op_outputs[o] = (code.two_output_ops >> o) & 1 ? 2 : 1;
    tensors += d.op_outputs[o];
    for (int i = 0; i < set.variants[code.ops[o].variant].spec.arity; ++i) read[code.ops[o].in[i]] = true;
  }
  for (int t = num_inputs; t < tensors; ++t)
    if (!read[t]) {
      d.hashes.push_back((code.output_ranks >> (2 * d.outputs.size())) & 3);
      d.outputs.push_back(t);
    }
  return d;
}

// The graphs of one range: their outputs, the outputs' hashes (or ranks) and how many
// outputs each operator has, from the walk's summary or else a replay. Graphs whose replay
// fails are left out.
std::vector<Decoded> DecodeRange(const Enumerator& e, absl::Span<const Fingerprinted> range,
                                 KernelMemo<uint32_t>& memo) {
  std::vector<Decoded> graphs;
  // Ranks pair outputs only with ranks: the whole range from summaries, or none.
  if (std::all_of(range.begin(), range.end(), [](const Fingerprinted& f) {
        return f.graph.num_ops > 0 && (f.graph.two_output_ops & kOutputSummary);
      })) {
    for (const Fingerprinted& f : range)
      graphs.push_back(FromSummary(e.op_set(), static_cast<int>(e.inputs().size()), f.graph));
    return graphs;
  }
  for (const Fingerprinted& f : range) {
    memo.MakeRoom();  // the last replay is read already
    auto rep = Replay<uint32_t>(e.op_set(), f.graph, e.inputs(), nullptr, &memo);
    if (!rep.ok()) continue;
    Decoded d{WithoutSummary(f.graph), rep->outputs, {}, {}};
    // Outputs are matched by equal contents: the memo's hashes tell them as well as
    // TensorHash and are computed already.
    for (int o : rep->outputs) d.hashes.push_back(rep->hashes.empty() ? TensorHash(rep->tensor(o)) : rep->hashes[o]);
    for (int o = 0; o < d.code.num_ops; ++o) {
      const int end = o + 1 < d.code.num_ops ? rep->first_output[o + 1] : rep->num_tensors();
      d.op_outputs[o] = static_cast<uint8_t>(end - rep->first_output[o]);
    }
    graphs.push_back(std::move(d));
  }
  return graphs;
}

// Every pair in small groups; in large ones, each graph with the smallest (the other
// pairs follow from those).
void PairGroup(const std::vector<Decoded>& graphs, std::vector<Candidate>& found) {
  const size_t n = graphs.size();
  for (size_t i = 0; i < n && (n <= 6 || i == 0); ++i)
    for (size_t j = i + 1; j < n; ++j) {
      Candidate c;
      if (Match(graphs[i], graphs[j], &c)) found.push_back(std::move(c));
    }
}

// Threads finish in any order; the result must not depend on it.
void SortCandidates(std::vector<Candidate>& all) {
  std::sort(all.begin(), all.end(), [](const Candidate& x, const Candidate& y) {
    if (int c = std::memcmp(&x.a, &y.a, sizeof(GraphCode))) return c < 0;
    return std::memcmp(&x.b, &y.b, sizeof(GraphCode)) < 0;
  });
}

}  // namespace

Pairer::Pairer(const Enumerator& e, int threads) : e_(e), threads_(std::max(1, threads)) {
  for (int t = 0; t < threads_; ++t)
    memos_.push_back(std::make_unique<KernelMemo<uint32_t>>(e.inputs(), kCandidateMemoBytes));
}

Pairer::~Pairer() = default;

std::vector<Candidate> Pairer::PairUp(absl::Span<const Fingerprinted> groups) {
  const std::vector<std::pair<size_t, size_t>> ranges = SharedRanges(groups);
  const int threads = threads_;
  std::vector<std::vector<Candidate>> found(threads);
  std::atomic<size_t> next{0};
  auto work = [&](int t) {
    for (size_t r; (r = next.fetch_add(1)) < ranges.size();) {
      const auto [begin, end] = ranges[r];
      PairGroup(DecodeRange(e_, groups.subspan(begin, end - begin), *memos_[t]), found[t]);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(work, t);
  for (auto& th : pool) th.join();
  std::vector<Candidate> all;
  for (auto& v : found) all.insert(all.end(), std::make_move_iterator(v.begin()), std::make_move_iterator(v.end()));
  SortCandidates(all);
  return all;
}

}  // namespace taso::gen
