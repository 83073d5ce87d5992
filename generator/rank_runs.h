// A team rank's share of the shared runs (issue 46). Each rank pairs consecutive
// fingerprint shards: while the graph store is read, every rank sends its part of each
// shard (the graphs it walked) to the shard's owner, which keeps the shard's runs of two
// graphs or more, in order, in a record file. The rule finder takes the runs in slices
// whose ends are counted from the first run of all (SliceEnds, rule_finder.h), and the
// order of the forms follows the slices; so the slice left open at the end of one rank's
// runs is passed on, whole, to the next rank, in rank order. The ranks' forms, taken in
// rank order, are then those of one process.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph_store.h"
#include "spill.h"
#include "team.h"

namespace taso::gen {

class RankRuns {
 public:
  // This rank's shards, read from `store` (this rank's walk) with the team exchanging
  // their graphs, `threads` shards at a time; the runs go to a file under `spill_dir`
  // past `memory_bytes`. `shard_done` (optional) is told the shards read so far.
  static absl::StatusOr<std::unique_ptr<RankRuns>> Gather(GraphStore& store, Team& team, int threads,
                                                          const std::string& spill_dir, uint64_t memory_bytes,
                                                          const std::function<void(int shards_done)>& shard_done);

  // After Gather, on every rank: receives the slice the ranks before left open, and
  // passes on the one this rank leaves open (the last rank closes it).
  absl::Status PassOnOpenSlice(Team& team);

  // The runs this rank pairs, in order: those passed on to it, then its own up to where
  // its last slice ends.
  absl::Status ForEach(const std::function<void(absl::Span<const Fingerprinted>)>& emit) const;

  uint64_t runs() const { return run_sizes_.size(); }  // this rank's own
  uint64_t graphs() const { return graphs_.size(); }

 private:
  RankRuns(const std::string& spill_dir, uint64_t memory_bytes);
  absl::Status ReadOwn(size_t lo, size_t n, std::vector<Fingerprinted>* out) const;

  SpillFolder folder_;
  RecordFile<Fingerprinted> graphs_;    // this rank's runs, one after another
  std::vector<uint32_t> run_sizes_;     // in graphs
  std::vector<Fingerprinted> carried_;  // the open slice passed on from the ranks before
  size_t own_runs_ = 0;                 // of this rank's runs, those paired here
};

// Which rank pairs shard `shard` of `shards`: consecutive shards per rank, so that rank
// order is fingerprint order.
int OwnerOf(int shard, int shards, int ranks);

}  // namespace taso::gen
