#include "graph_store.h"

#include <stdlib.h>
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "taso/ir/parallel.h"
#include "taso/ir/status_macros.h"

namespace taso::gen {

size_t RecordBytes(int max_ops) { return 12 + 4 * static_cast<size_t>(max_ops); }

void EncodeRecord(uint64_t fingerprint, const GraphCode& code, int max_ops, char* out) {
  for (int b = 0; b < 8; ++b) out[b] = static_cast<char>(fingerprint >> (8 * b));
  out[8] = static_cast<char>(code.num_ops);
  out[9] = static_cast<char>(code.lone_input);
  out[10] = static_cast<char>(code.two_output_ops);
  out[11] = static_cast<char>(code.output_ranks);
  std::memcpy(out + 12, code.ops, 4 * static_cast<size_t>(max_ops));
  static_assert(sizeof(GenOp) == 4);
}

Fingerprinted DecodeRecord(const char* in, int max_ops) {
  Fingerprinted f{0, GraphCode{}};  // unused operators stay zero: codes compare as bytes
  for (int b = 0; b < 8; ++b) f.fingerprint |= uint64_t{static_cast<uint8_t>(in[b])} << (8 * b);
  f.graph.num_ops = static_cast<uint8_t>(in[8]);
  f.graph.lone_input = static_cast<uint8_t>(in[9]);
  f.graph.two_output_ops = static_cast<uint8_t>(in[10]);
  f.graph.output_ranks = static_cast<uint8_t>(in[11]);
  std::memcpy(f.graph.ops, in + 12, 4 * static_cast<size_t>(max_ops));
  return f;
}

struct GraphStore::Writer {
  int thread = 0;
  std::vector<std::vector<char>> buffers;  // per shard: encoded records not yet on disk
  uint64_t held = 0;                       // bytes the buffers take (their capacity)
  uint64_t graphs = 0;
  std::vector<uint64_t> per_shard;  // graphs per shard
  absl::Status status;
};

namespace {

// By fingerprint, then by code (the single table's order).
bool FingerprintLess(const Fingerprinted& a, const Fingerprinted& b) {
  if (a.fingerprint != b.fingerprint) return a.fingerprint < b.fingerprint;
  return std::memcmp(&a.graph, &b.graph, sizeof(GraphCode)) < 0;
}

// A shard's runs of at least `min_run` equal fingerprints, sorted by FingerprintLess: a
// counting sort on the 16 fingerprint bits below the shard's (`shard_shift`: the shard is
// fingerprint >> shard_shift), then each bucket, a few graphs, sorted. Equal fingerprints
// share a bucket. (Sorting whole shards was a tenth of the pairing's time at K=4.)
std::vector<Fingerprinted> SortedRuns(std::vector<Fingerprinted> shard, int shard_shift, size_t min_run) {
  constexpr int kBits = 16;
  const int shift = std::max(0, shard_shift - kBits);
  auto bucket = [&](const Fingerprinted& f) { return static_cast<size_t>((f.fingerprint >> shift) & 0xFFFF); };
  std::vector<size_t> start((size_t{1} << kBits) + 1, 0);
  for (const Fingerprinted& f : shard) ++start[bucket(f) + 1];
  for (size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
  std::vector<Fingerprinted> sorted(shard.size());
  {
    std::vector<size_t> next(start.begin(), start.end() - 1);
    for (const Fingerprinted& f : shard) sorted[next[bucket(f)]++] = f;
  }
  std::vector<Fingerprinted>().swap(shard);
  size_t out = 0;  // runs kept are moved down in place: out never passes the bucket read
  for (size_t b = 0; b + 1 < start.size(); ++b) {
    const size_t end = start[b + 1];
    std::sort(sorted.begin() + start[b], sorted.begin() + end, FingerprintLess);
    for (size_t i = start[b]; i < end;) {
      size_t j = i;
      while (j < end && sorted[j].fingerprint == sorted[i].fingerprint) ++j;
      if (j - i >= min_run)
        for (size_t k = i; k < j; ++k) sorted[out++] = sorted[k];
      i = j;
    }
  }
  sorted.resize(out);
  sorted.shrink_to_fit();
  return sorted;
}

}  // namespace

GraphStore::GraphStore(const GraphStoreOptions& options)
    : options_(options), record_bytes_(RecordBytes(options.max_ops)), folder_(options.dir) {
  int bits = 0;
  while ((1 << bits) < options_.shards) ++bits;
  shift_ = 64 - bits;
  for (int t = 0; t < options_.threads; ++t) {
    auto w = std::make_unique<Writer>();
    w->thread = t;
    w->buffers.resize(options_.shards);
    w->per_shard.assign(options_.shards, 0);
    writers_.push_back(std::move(w));
  }
}

absl::StatusOr<std::unique_ptr<GraphStore>> GraphStore::Create(const GraphStoreOptions& options) {
  if (options.shards < 1 || options.shards > (1 << 20) || (options.shards & (options.shards - 1)))
    return absl::InvalidArgumentError(absl::StrCat("shards: ", options.shards, " is not a power of two up to 2^20"));
  if (options.threads < 1 || options.max_ops < 0 || options.max_ops > kMaxOps)
    return absl::InvalidArgumentError("graph store: bad thread or operator count");
  return std::unique_ptr<GraphStore>(new GraphStore(options));
}

GraphStore::~GraphStore() = default;

std::string GraphStore::FileOf(const std::string& dir, int thread, int shard) const {
  return absl::StrCat(dir, "/t", thread, "_s", shard, ".bin");
}

void GraphStore::Add(int thread, uint64_t fingerprint, const GraphCode& code) {
  Writer& w = *writers_[thread];
  if (!w.status.ok()) return;
  const int shard = shift_ == 64 ? 0 : static_cast<int>(fingerprint >> shift_);
  std::vector<char>& buf = w.buffers[shard];
  const size_t at = buf.size(), capacity = buf.capacity();
  buf.resize(at + record_bytes_);
  EncodeRecord(fingerprint, code, options_.max_ops, buf.data() + at);
  w.held += buf.capacity() - capacity;  // what the buffers take, not only what they hold
  ++w.graphs;
  ++w.per_shard[shard];
  if (w.held > options_.memory_bytes / options_.threads) w.status = Spill(w);
}

// Appends every buffer of `w` to its file and frees it.
absl::Status GraphStore::Spill(Writer& w) {
  uint64_t bytes = 0;
  for (const std::vector<char>& buf : w.buffers) bytes += buf.size();
  if (spilled_.fetch_add(bytes) + bytes > options_.disk_bytes)
    return absl::ResourceExhaustedError(
        absl::StrCat("enumeration stopped after ", graphs(), " graphs: they would need more than the disk budget of ",
                     options_.disk_bytes >> 20, " MiB (--max_disk_mb); lower -k or raise the budget"));
  absl::StatusOr<std::string> dir = folder_.Path();  // one folder per store, made by the first to spill
  if (!dir.ok()) return dir.status();
  const int thread = w.thread;
  for (int s = 0; s < options_.shards; ++s) {
    std::vector<char>& buf = w.buffers[s];
    if (buf.empty()) continue;
    const std::string file = FileOf(*dir, thread, s);
    std::FILE* f = std::fopen(file.c_str(), "ab");
    const bool ok = f && std::fwrite(buf.data(), 1, buf.size(), f) == buf.size();
    if ((f && std::fclose(f) != 0) || !ok)
      return absl::DataLossError(absl::StrCat("cannot write '", file, "' (disk full?)"));
    std::vector<char>().swap(buf);  // the memory goes back, not only the size
  }
  w.held = 0;
  return absl::OkStatus();
}

absl::Status GraphStore::Finish() {
  RETURN_IF_ERROR(status());
  if (!folder_.made()) return absl::OkStatus();
  for (auto& w : writers_) {
    w->status = Spill(*w);
    RETURN_IF_ERROR(w->status);
  }
  return absl::OkStatus();
}

absl::Status GraphStore::status() const {
  for (const auto& w : writers_) RETURN_IF_ERROR(w->status);
  return absl::OkStatus();
}

uint64_t GraphStore::graphs() const {
  uint64_t n = 0;
  for (const auto& w : writers_) n += w->graphs;
  return n;
}

uint64_t GraphStore::spilled_bytes() const { return spilled_.load(); }

uint64_t GraphStore::largest_shard() const {
  uint64_t most = 0;
  for (int s = 0; s < options_.shards; ++s) {
    uint64_t n = 0;
    for (const auto& w : writers_) n += w->per_shard[s];
    most = std::max(most, n);
  }
  return most;
}

// Every graph of one shard, from its files and its buffers, unsorted.
absl::StatusOr<std::vector<Fingerprinted>> GraphStore::ReadShard(int shard) const {
  std::vector<Fingerprinted> out;
  uint64_t n = 0;
  for (const auto& w : writers_) n += w->per_shard[shard];
  out.reserve(n);
  auto decode = [&](const std::vector<char>& bytes) {
    for (size_t at = 0; at + record_bytes_ <= bytes.size(); at += record_bytes_)
      out.push_back(DecodeRecord(bytes.data() + at, options_.max_ops));
  };
  for (int t = 0; t < options_.threads; ++t) {
    if (folder_.made()) {
      const std::string file = FileOf(*folder_.Path(), t, shard);
      std::error_code ec;
      if (std::filesystem::exists(file, ec)) {
        std::vector<char> bytes(std::filesystem::file_size(file, ec));
        std::FILE* f = std::fopen(file.c_str(), "rb");
        const bool ok = f && std::fread(bytes.data(), 1, bytes.size(), f) == bytes.size();
        if (f) std::fclose(f);
        if (!ok || ec) return absl::DataLossError(absl::StrCat("cannot read '", file, "'"));
        decode(bytes);
      }
    }
    decode(writers_[t]->buffers[shard]);
  }
  if (out.size() != n)
    return absl::DataLossError(absl::StrCat("shard ", shard, ": read ", out.size(), " graphs of ", n));
  return out;
}

void EmitRuns(absl::Span<const Fingerprinted> sorted, const std::function<void(absl::Span<const Fingerprinted>)>& run) {
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j < sorted.size() && sorted[j].fingerprint == sorted[i].fingerprint) ++j;
    run(sorted.subspan(i, j - i));
    i = j;
  }
}

absl::Status GraphStore::ForEachRun(size_t min_run, int threads,
                                    const std::function<void(absl::Span<const Fingerprinted>)>& run,
                                    const std::function<void(int shards_done)>& shard_done,
                                    const ShardExchange& exchange) {
  RETURN_IF_ERROR(status());
  threads = std::max(1, threads);
  for (int lo = 0; lo < options_.shards; lo += threads) {
    const int hi = std::min(options_.shards, lo + threads);
    std::vector<absl::StatusOr<std::vector<Fingerprinted>>> kept(hi - lo);
    ParallelFor(hi - lo, hi - lo, [&](size_t i) { kept[i] = ReadShard(lo + static_cast<int>(i)); });
    for (int i = 0; i < hi - lo; ++i) {
      RETURN_IF_ERROR(kept[i].status());
      if (exchange) RETURN_IF_ERROR(exchange(lo + i, &*kept[i]));
    }
    ParallelFor(hi - lo, hi - lo, [&](size_t i) { *kept[i] = SortedRuns(std::move(*kept[i]), shift_, min_run); });
    for (auto& k : kept) {
      EmitRuns(*k, run);
      std::vector<Fingerprinted>().swap(*k);
    }
    if (shard_done) shard_done(hi);
  }
  return absl::OkStatus();
}

}  // namespace taso::gen
