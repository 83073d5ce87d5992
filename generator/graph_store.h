// The enumerated graphs, held by fingerprint shard so that memory does not grow with the
// graphs kept (issue 46). The fingerprint space is cut into `shards` equal ranges by its
// top bits; each enumerating thread appends a graph, compactly encoded (its fingerprint
// and 4 bytes per operator), to its buffer for the graph's shard. Past the memory budget,
// a thread's buffers are appended to its files on disk. Reading back takes one shard at
// a time (its files and buffers), sorted by fingerprint then code: the shards in order are
// the single sorted table of every graph, so what is found from them does not depend on
// the number of shards or on what went to disk. Once anything went to disk, Finish() puts
// the rest there too, so that the read-back holds only the shards it reads.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "enumerator.h"
#include "spill.h"

namespace taso::gen {

struct GraphStoreOptions {
  int shards = 1024;                   // a power of two
  int threads = 2;                     // writers, numbered 0..threads-1
  int max_ops = 4;                     // operators per graph, for the record size
  uint64_t memory_bytes = 1ull << 30;  // graphs held in memory, all threads together
  uint64_t disk_bytes = 64ull << 30;   // graphs written to disk; past it, Add fails
  std::string dir;                     // where the spill files go (a fresh folder in it)
};

class GraphStore {
 public:
  // Makes its spill folder under options.dir (only once something spills).
  static absl::StatusOr<std::unique_ptr<GraphStore>> Create(const GraphStoreOptions& options);
  ~GraphStore();  // its spill folder goes with it

  // Records a graph; `thread` must be used by one thread at a time. After an error (the
  // disk budget passed, a write failed) it records nothing more; see status().
  void Add(int thread, uint64_t fingerprint, const GraphCode& code);
  absl::Status status() const;

  // After the last Add: if anything went to disk, every buffer follows it, so that memory
  // holds no graph the read-back does not need.
  absl::Status Finish();

  // Calls `run` on every run of at least `min_run` graphs sharing a fingerprint, in
  // fingerprint then code order; `threads` shards are read and sorted at once.
  // `shard_done` (optional) is told the shards read so far. `exchange` (optional) is
  // given each shard's graphs, unsorted, on the calling thread in shard order, before
  // they are sorted: it may replace them (with those of other processes too, or none).
  using ShardExchange = std::function<absl::Status(int shard, std::vector<Fingerprinted>* graphs)>;
  absl::Status ForEachRun(size_t min_run, int threads, const std::function<void(absl::Span<const Fingerprinted>)>& run,
                          const std::function<void(int shards_done)>& shard_done = nullptr,
                          const ShardExchange& exchange = nullptr);

  uint64_t graphs() const;         // recorded so far
  uint64_t spilled_bytes() const;  // written to disk so far
  uint64_t largest_shard() const;  // graphs in the largest shard
  size_t record_bytes() const { return record_bytes_; }
  int shards() const { return options_.shards; }

 private:
  struct Writer;  // one thread's buffers
  explicit GraphStore(const GraphStoreOptions& options);
  absl::Status Spill(Writer& w);
  std::string FileOf(const std::string& dir, int thread, int shard) const;
  absl::StatusOr<std::vector<Fingerprinted>> ReadShard(int shard) const;

  GraphStoreOptions options_;
  size_t record_bytes_;
  int shift_;                         // fingerprint >> shift_ is the shard
  mutable SpillFolder folder_;        // Path() makes it on first use
  std::atomic<uint64_t> spilled_{0};  // bytes written to disk, all threads
  std::vector<std::unique_ptr<Writer>> writers_;
};

// Calls `run` on each run of equal fingerprints of `sorted`, in order.
void EmitRuns(absl::Span<const Fingerprinted> sorted, const std::function<void(absl::Span<const Fingerprinted>)>& run);

// A graph as bytes: the fingerprint (8, little-endian), the number of operators, the lone
// input, then 4 bytes per operator up to `max_ops`.
size_t RecordBytes(int max_ops);
void EncodeRecord(uint64_t fingerprint, const GraphCode& code, int max_ops, char* out);
Fingerprinted DecodeRecord(const char* in, int max_ops);

}  // namespace taso::gen
