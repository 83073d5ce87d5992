#include "rank_runs.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "rule_finder.h"
#include "taso/ir/status_macros.h"

namespace taso::gen {

namespace {

constexpr size_t kReadRecords = 1 << 20;  // read back at once

// Every rank's part of each shard to the shard's owner, which takes them in rank order.
GraphStore::ShardExchange ShardsToOwners(Team& team, int shards) {
  return [&team, shards](int shard, std::vector<Fingerprinted>* graphs) -> absl::Status {
    const int owner = OwnerOf(shard, shards, team.size());
    if (owner != team.rank()) {
      RETURN_IF_ERROR(team.Send(owner, AsBytes(absl::MakeConstSpan(*graphs))));
      graphs->clear();
      return absl::OkStatus();
    }
    for (int from = 0; from < team.size(); ++from) {
      if (from == team.rank()) continue;
      ASSIGN_OR_RETURN(std::vector<char> bytes, team.Receive(from));
      const std::vector<Fingerprinted> theirs = FromBytes<Fingerprinted>(bytes);
      graphs->insert(graphs->end(), theirs.begin(), theirs.end());
    }
    return absl::OkStatus();
  };
}

}  // namespace

int OwnerOf(int shard, int shards, int ranks) { return static_cast<int>(static_cast<int64_t>(shard) * ranks / shards); }

RankRuns::RankRuns(const std::string& spill_dir, uint64_t memory_bytes)
    : folder_(spill_dir), graphs_(&folder_, "runs.bin", memory_bytes) {}

absl::StatusOr<std::unique_ptr<RankRuns>> RankRuns::Gather(GraphStore& store, Team& team, int threads,
                                                           const std::string& spill_dir, uint64_t memory_bytes,
                                                           const std::function<void(int shards_done)>& shard_done) {
  std::unique_ptr<RankRuns> out(new RankRuns(spill_dir.empty() ? DefaultSpillParent() : spill_dir, memory_bytes));
  absl::Status kept = absl::OkStatus();
  RETURN_IF_ERROR(store.ForEachRun(
      2, threads,
      [&](absl::Span<const Fingerprinted> run) {
        out->run_sizes_.push_back(static_cast<uint32_t>(run.size()));
        for (const Fingerprinted& g : run)
          if (kept.ok()) kept = out->graphs_.Append(g);
      },
      shard_done, ShardsToOwners(team, store.shards())));
  RETURN_IF_ERROR(kept);
  out->own_runs_ = out->run_sizes_.size();
  return out;
}

absl::Status RankRuns::ReadOwn(size_t lo, size_t n, std::vector<Fingerprinted>* out) const {
  const size_t at = out->size();
  out->resize(at + n);
  return graphs_.Read(lo, n, out->data() + at);
}

absl::Status RankRuns::PassOnOpenSlice(Team& team) {
  if (team.rank() > 0) {
    ASSIGN_OR_RETURN(std::vector<char> bytes, team.Receive(team.rank() - 1));
    carried_ = FromBytes<Fingerprinted>(bytes);
  }
  if (team.rank() == team.size() - 1) return absl::OkStatus();
  // The rule finder's slices over the runs passed on, then this rank's: where the last
  // one ends (before run `end`), if any does.
  size_t graphs = carried_.size(), end = 0;
  bool ended = false;
  for (size_t r = 0; r <= run_sizes_.size(); ++r) {
    if (SliceEnds(graphs)) {
      end = r;
      ended = true;
      graphs = 0;
    }
    if (r < run_sizes_.size()) graphs += run_sizes_[r];
  }
  std::vector<Fingerprinted> open;
  if (!ended) open.swap(carried_);  // the slice goes on past this rank's runs
  const size_t first = std::accumulate(run_sizes_.begin(), run_sizes_.begin() + end, size_t{0});
  RETURN_IF_ERROR(ReadOwn(first, graphs_.size() - first, &open));
  own_runs_ = end;
  return team.Send(team.rank() + 1, AsBytes(absl::MakeConstSpan(open)));
}

absl::Status RankRuns::ForEach(const std::function<void(absl::Span<const Fingerprinted>)>& emit) const {
  EmitRuns(carried_, emit);
  std::vector<Fingerprinted> buffer;  // records [lo, lo + buffer.size())
  size_t lo = 0, at = 0;
  for (size_t r = 0; r < own_runs_; ++r) {
    const size_t n = run_sizes_[r];
    if (at + n > lo + buffer.size()) {
      buffer.clear();
      lo = at;
      RETURN_IF_ERROR(ReadOwn(at, std::min(std::max(n, kReadRecords), graphs_.size() - at), &buffer));
    }
    emit(absl::MakeConstSpan(buffer).subspan(at - lo, n));
    at += n;
  }
  return absl::OkStatus();
}

}  // namespace taso::gen
