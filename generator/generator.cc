#include "generator.h"

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "graph_store.h"
#include "rank_runs.h"
#include "taso/ir/status_macros.h"
#include "team.h"

namespace taso::gen {
namespace {

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The walk's progress and a forecast of what the whole enumeration will need, from the
// share of first operators walked (branches differ in size, so it firms up as it goes):
// a live line on a terminal, else a line every 20 s.
class WalkForecast {
 public:
  WalkForecast(const GenerateOptions& options, bool tty, size_t record_bytes)
      : options_(options), tty_(tty), record_bytes_(record_bytes), start_(std::chrono::steady_clock::now()) {}

  void Update(double done, uint64_t graphs) {
    const double elapsed = Since(start_);
    if (!options_.progress || (!tty_ && elapsed < next_line_s_ && done < 1)) return;
    next_line_s_ = elapsed + 20;
    std::fprintf(stderr, tty_ ? "\r  %s   " : "  %s\n", Line(done, graphs, elapsed).c_str());
  }

 private:
  std::string Line(double done, uint64_t graphs, double elapsed) const {
    std::string line = absl::StrFormat("enumerating: %.1f%% of branches, %d graphs (%.2f M/s)", 100 * done, graphs,
                                       graphs / std::max(elapsed, 1e-3) / 1e6);
    if (done < 0.01 || done >= 1) return line;
    const double total = graphs / done;
    const double disk_mb = std::max(0.0, total * record_bytes_ / 1048576.0 - options_.max_memory_mb);
    // Reading back: a sorted shard per thread, twice an even share for skew.
    const double read_mb = 2 * total / options_.shards * sizeof(Fingerprinted) * options_.threads / 1048576.0;
    return absl::StrCat(
        line, absl::StrFormat("; forecast %.3g graphs, %.0f s more, %.0f MiB on disk, %.0f MiB held", total,
                              elapsed * (1 - done) / done, disk_mb,
                              std::min<double>(options_.max_memory_mb, total * record_bytes_ / 1048576.0) + read_mb));
  }

  const GenerateOptions& options_;
  const bool tty_;
  const size_t record_bytes_;
  const std::chrono::steady_clock::time_point start_;
  double next_line_s_ = 20;
};

// How far a stage after the enumeration is, with a forecast of its time left from the
// share done: a live line on a terminal, else a line every 20 s.
class StageProgress {
 public:
  StageProgress(bool on, bool tty) : on_(on), tty_(tty) {}
  void Update(const std::string& what, double done) {
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    const std::string stage = what.substr(0, what.find(':'));
    if (stage != stage_) {
      stage_ = stage;
      stage_start_ = now;
    }
    const double elapsed = std::chrono::duration<double>(now - stage_start_).count();
    const double since_line = std::chrono::duration<double>(now - last_line_).count();
    if (!tty_ && since_line < 20) return;
    if (tty_ && since_line < 0.2) return;
    last_line_ = now;
    std::string line = what;
    if (done > 0.01 && done < 1 && elapsed > 1)
      line += absl::StrFormat(", about %.0f s left", elapsed * (1 - done) / done);
    std::fprintf(stderr, tty_ ? "\r  %s   " : "  %s\n", line.c_str());
  }

 private:
  const bool on_, tty_;
  std::string stage_;
  std::chrono::steady_clock::time_point stage_start_, last_line_ = std::chrono::steady_clock::now();
};

GraphStoreOptions StoreOptions(const GenerateOptions& options) {
  GraphStoreOptions s;
  s.shards = options.shards;
  s.threads = std::max(1, options.threads);
  s.max_ops = options.max_ops;
  s.memory_bytes = options.max_memory_mb << 20;
  s.disk_bytes = options.max_disk_mb << 20;
  s.dir = options.spill_dir;
  if (s.dir.empty()) s.dir = DefaultSpillParent();
  return s;
}

// Every graph of this rank's share of the walk into the store, with progress and a forecast.
absl::Status EnumerateInto(const Enumerator& e, const GenerateOptions& options, bool tty, const Team& team,
                           GraphStore& store) {
  WalkForecast forecast(options, tty, store.record_bytes());
  EnumerationLimits limits;
  limits.threads = std::max(1, options.threads);
  limits.part = team.rank();
  limits.parts = team.size();
  limits.progress = [&](double done, uint64_t graphs) { forecast.Update(done, graphs); };
  limits.check = [&] { return store.status(); };
  return e.ForEachGraph(limits, [&](int t, uint64_t fp, const GraphCode& c) { store.Add(t, fp, c); });
}

// The report's counts of every rank, summed on rank 0.
absl::Status SumOnRankZero(Team& team, GenerateReport* report) {
  if (team.size() == 1) return absl::OkStatus();
  uint64_t* fields[] = {&report->graphs, &report->groups, &report->group_graphs, &report->spilled_bytes};
  if (team.rank() != 0) {
    std::vector<uint64_t> mine;
    for (uint64_t* f : fields) mine.push_back(*f);
    return team.Send(0, AsBytes(absl::MakeConstSpan(mine)));
  }
  for (int from = 1; from < team.size(); ++from) {
    ASSIGN_OR_RETURN(std::vector<char> bytes, team.Receive(from));
    const std::vector<uint64_t> theirs = FromBytes<uint64_t>(bytes);
    if (theirs.size() != std::size(fields)) return absl::DataLossError(absl::StrCat("rank ", from, ": no counts"));
    for (size_t i = 0; i < theirs.size(); ++i) *fields[i] += theirs[i];
  }
  return absl::OkStatus();
}

int CountOp(const RuleGraph& side, const std::string& op) {
  int n = 0;
  for (const RuleOp& o : side.ops) n += o.op->name() == op;
  return n;
}

}  // namespace

namespace {

uint64_t StatusField(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(field, 0) == 0) return std::stoull(line.substr(std::string(field).size())) / 1024;
  return 0;
}

}  // namespace

uint64_t PeakRssMb() { return StatusField("VmHWM:"); }
uint64_t RssMb() { return StatusField("VmRSS:"); }

std::string GenerateReport::Table() const {
  std::string s;
  auto row = [&](const char* what, uint64_t n, const std::string& note) {
    absl::StrAppend(&s, absl::StrFormat("  %-28s %12d  %s\n", what, n, note));
  };
  row("graphs enumerated", graphs,
      absl::StrFormat("fingerprinted (%.2f s), %d shards, %d MiB on disk", enumerate_s, shards, spilled_bytes >> 20));
  row("fingerprint collisions", groups, absl::StrFormat("groups of %d graphs", group_graphs));
  row("candidate pairs", counts.candidates, "equal fingerprints");
  row("distinct up to renaming", counts.distinct, "");
  row("after input renaming", counts.after_renaming, "");
  row("after common subgraph", counts.after_common_subgraph, "");
  row("after float checks", counts.after_float_checks,
      absl::StrFormat("(sorting, pruning and checks %.2f s)", prune_s));
  row("parametric", counts.after_parameters, "= rules (parameter families merged)");
  if (!changing_op.empty())
    row("changing", changing, absl::StrCat("= rules (those applying ", changing_op, " more or less often)"));
  absl::StrAppend(&s, absl::StrFormat("  wall time %.2f s, peak memory %d MiB\n", total_s, peak_rss_mb));
  return s;
}

absl::Status GenerateTo(const GenerateOptions& options, GenerateReport* report, RuleSetSink& sink) {
  std::unique_ptr<Team> solo = SoloTeam();
  return GenerateTo(options, report, sink, *solo);
}

absl::Status GenerateTo(const GenerateOptions& options_in, GenerateReport* report, RuleSetSink& sink, Team& team) {
  GenerateOptions options = options_in;
  options.progress = options.progress && team.rank() == 0;  // one rank tells
  if (options.max_ops < 1 || options.max_ops > kMaxSupportedOps)
    return absl::InvalidArgumentError(
        absl::StrCat("-k ", options.max_ops, " is not supported (1 to ", kMaxSupportedOps, ")"));
  ASSIGN_OR_RETURN(OpSet set, MakeOpSet(options.ops));
  if (!options.changing.empty() &&
      std::find(set.op_names.begin(), set.op_names.end(), options.changing) == set.op_names.end())
    return absl::InvalidArgumentError(absl::StrCat("--changing ", options.changing,
                                                   ": not an operator enumerated (--ops ",
                                                   absl::StrJoin(set.op_names, ","), ")"));
  const auto start = std::chrono::steady_clock::now();
  report->variants = static_cast<int>(set.variants.size());
  report->inputs = static_cast<int>(set.inputs.size());
  report->operators = set.op_names;
  Enumerator e(set, options.max_ops, options.seed);
  const bool tty = options.progress && isatty(STDERR_FILENO);  // the live progress line
  auto phase = [&](const std::string& line) {
    if (!options.progress) return;
    if (tty) std::fprintf(stderr, "\r%100s\r", "");
    std::fprintf(stderr, "  [%.1f s] %s (%llu MiB held, peak %llu MiB)\n", Since(start), line.c_str(),
                 static_cast<unsigned long long>(RssMb()), static_cast<unsigned long long>(PeakRssMb()));
  };
  StageProgress progress(options.progress, tty);

  auto t = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::unique_ptr<GraphStore> store, GraphStore::Create(StoreOptions(options)));
  RETURN_IF_ERROR(EnumerateInto(e, options, tty, team, *store));
  RETURN_IF_ERROR(store->Finish());
  report->enumerate_s = Since(t);
  report->graphs = store->graphs();
  report->shards = store->shards();
  report->spilled_bytes = store->spilled_bytes();
  report->largest_shard = store->largest_shard();
  phase(absl::StrCat(report->graphs, " graphs enumerated in ", report->shards, " shards (",
                     (report->spilled_bytes >> 20), " MiB on disk, largest shard ", report->largest_shard, " graphs)"));

  t = std::chrono::steady_clock::now();
  RuleSet header;
  header.max_ops = options.max_ops;
  header.operators = set.op_names;
  if (team.rank() == 0) RETURN_IF_ERROR(sink.Begin(header));
  FinderOptions finder;
  finder.threads = std::max(1, options.threads);
  finder.memory_bytes = (options.max_memory_mb << 20) / 4;
  finder.spill_dir = options.spill_dir;
  finder.chunk = options.form_chunk;
  finder.family_share = options.family_share;
  finder.changing = options.changing;
  int shards_read = 0;
  const int shards = store->shards();
  finder.progress = [&](const char* stage, size_t done, size_t total) {
    if (std::string(stage) == "candidates")
      progress.Update(absl::StrFormat("pairing: %d of %d shards read, %d candidates, %d distinct", shards_read, shards,
                                      done, total),
                      static_cast<double>(shards_read) / shards);
    else
      progress.Update(absl::StrFormat("%s: %d of %d forms", stage, done, total), static_cast<double>(done) / total);
  };
  // Read once: the store and its files go as soon as it is read. A team's rank pairs its
  // shards, gathered from every rank first (rank_runs.h).
  SharedRuns runs;
  std::unique_ptr<RankRuns> rank_runs;
  if (team.size() == 1) {
    runs = [&](const std::function<void(absl::Span<const Fingerprinted>)>& emit) {
      absl::Status read = store->ForEachRun(
          2, finder.threads,
          [&](absl::Span<const Fingerprinted> run) {
            ++report->groups;
            report->group_graphs += run.size();
            emit(run);
          },
          [&](int done) { shards_read = done; });
      store.reset();
      return read;
    };
  } else {
    progress.Update("pairing: gathering this rank's shards", 0);
    ASSIGN_OR_RETURN(rank_runs, RankRuns::Gather(*store, team, finder.threads, options.spill_dir, finder.memory_bytes,
                                                 [&](int done) { shards_read = done; }));
    store.reset();
    report->groups = rank_runs->runs();
    report->group_graphs = rank_runs->graphs();
    RETURN_IF_ERROR(rank_runs->PassOnOpenSlice(team));
    phase(absl::StrCat(report->groups, " shared fingerprints in this rank's shards"));
    runs = [&](const std::function<void(absl::Span<const Fingerprinted>)>& emit) {
      absl::Status read = rank_runs->ForEach(emit);
      rank_runs.reset();  // read once, like the store
      return read;
    };
  }
  // --changing: the rules changing how often that operator is applied, renamed r0000,
  // r0001... in their order.
  uint64_t written = 0;
  auto to_sink = [&](std::vector<Rule> batch) -> absl::Status {
    if (options.changing.empty()) return sink.Add(std::move(batch));
    std::vector<Rule> kept;
    for (Rule& r : batch)
      if (CountOp(r.source, options.changing) != CountOp(r.target, options.changing)) {
        r.name = absl::StrFormat("r%04d", report->changing++);
        kept.push_back(std::move(r));
      }
    return sink.Add(std::move(kept));
  };
  progress.Update("pairing: reading the shards back", 0);  // starts the stage's clock
  RETURN_IF_ERROR(FindRules(
      e, runs, finder, &report->counts, phase,
      [&](std::vector<Rule> batch) {
        written += batch.size();
        progress.Update(absl::StrFormat("writing: %d of %d rules", written, report->counts.after_float_checks), 1);
        return to_sink(std::move(batch));
      },
      team));
  RETURN_IF_ERROR(SumOnRankZero(team, report));
  if (team.rank() != 0) return absl::OkStatus();
  RETURN_IF_ERROR(sink.End());
  report->changing_op = options.changing;
  if (options.changing.empty()) report->changing = report->counts.after_parameters;
  report->prune_s = Since(t);
  report->total_s = Since(start);
  report->peak_rss_mb = PeakRssMb();
  return absl::OkStatus();
}

absl::StatusOr<RuleSet> Generate(const GenerateOptions& options, GenerateReport* report) {
  RuleSetCollector rules;
  RETURN_IF_ERROR(GenerateTo(options, report, rules));
  return std::move(rules.rules());
}

}  // namespace taso::gen
