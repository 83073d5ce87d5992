// taso-gen's whole pipeline: enumerate, fingerprint, confirm, prune, write rules.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "rule_finder.h"
#include "rule_writer.h"
#include "taso/rules/rules.h"
#include "team.h"

namespace taso::gen {

inline constexpr int kMaxSupportedOps = 5;

struct GenerateOptions {
  int max_ops = 3;
  std::vector<std::string> ops;  // empty: the whole generator set
  int threads = 2;
  // The enumerated graphs are held by fingerprint shard (graph_store.h): up to
  // max_memory_mb of them in memory, the rest on disk (in spill_dir) up to max_disk_mb.
  // The candidates' distinct forms keep a quarter of it for their records (form_store.h).
  uint64_t max_memory_mb = 1024;
  uint64_t max_disk_mb = 64 * 1024;
  std::string spill_dir;  // empty: $TMPDIR, else /tmp
  int shards = 1024;      // a power of two; 1 is the single sorted table
  // The rule finder's batches (rule_finder.h's FinderOptions): the rules do not depend on
  // them; tests make them small.
  size_t form_chunk = 1 << 16, family_share = 1 << 18;
  uint64_t seed = 1;
  bool progress = false;  // a progress line on stderr
  // Non-empty: keep only the rules whose two sides apply this operator a different number
  // of times (merges and splits of it), so that a database built at a larger K for a few
  // operator families holds what the K=3 one cannot, not again what it holds.
  std::string changing;
};

struct GenerateReport {
  int variants = 0, inputs = 0;
  std::vector<std::string> operators;  // those enumerated
  uint64_t graphs = 0;
  uint64_t groups = 0;        // fingerprints shared by two graphs or more
  uint64_t group_graphs = 0;  // the graphs in them
  PruneCounts counts;
  int shards = 0;
  uint64_t spilled_bytes = 0;  // graphs written to disk
  uint64_t largest_shard = 0;  // graphs in the largest shard
  std::string changing_op;     // GenerateOptions::changing
  uint64_t changing = 0;       // the rules it kept
  double enumerate_s = 0, prune_s = 0, total_s = 0;
  uint64_t peak_rss_mb = 0;
  std::string Table() const;
};

// The rules to `sink` as they are found (the header first: max_ops and the operators).
absl::Status GenerateTo(const GenerateOptions& options, GenerateReport* report, RuleSetSink& sink);
// The same, shared by a team's ranks (team.h): each walks a share of the graphs and pairs
// a share of the fingerprint shards; rank 0 prunes, writes to `sink` (the others' sinks
// are not called) and reports the counts of all. The rules are those of one process.
absl::Status GenerateTo(const GenerateOptions& options, GenerateReport* report, RuleSetSink& sink, Team& team);
// The rules in memory.
absl::StatusOr<RuleSet> Generate(const GenerateOptions& options, GenerateReport* report);

// Peak resident memory of this process so far, and now, in MiB.
uint64_t PeakRssMb();
uint64_t RssMb();

}  // namespace taso::gen
