// taso-gen -k K -o rules.pb [--ops LIST] [--changing OP] [--text]: generates graph substitution rules.
#include <sched.h>
#include <cstdio>
#include <fstream>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli.h"
#include "generator.h"
#include "spill.h"
#include "team.h"

ABSL_FLAG(int, k, 3, "largest number of operators in a graph (1 to 5)");
ABSL_FLAG(std::string, o, "", "output rules file");
ABSL_FLAG(std::string, ops, "", "comma-separated operators to enumerate (default: the whole generator set)");
ABSL_FLAG(std::string, changing, "",
          "keep only rules whose sides apply this operator a different number of times (e.g. merges of Gemm)");
ABSL_FLAG(bool, text, false, "write the readable text form instead of the binary database");
ABSL_FLAG(int, threads, 2, "worker threads");
ABSL_FLAG(uint64_t, max_memory_mb, 1024,
          "memory for the enumerated graphs; beyond it they go to disk (--spill_dir), by fingerprint shard");
ABSL_FLAG(uint64_t, max_disk_mb, 64 * 1024, "disk for the enumerated graphs; generation stops with an error beyond it");
ABSL_FLAG(std::string, spill_dir, "", "where graphs beyond --max_memory_mb go (default: $TMPDIR or /tmp)");
ABSL_FLAG(int, shards, 1024, "fingerprint shards the graphs are sorted in (a power of two; 1: one table)");
ABSL_FLAG(uint64_t, seed, 1, "seed of the random test inputs");
ABSL_FLAG(bool, quiet, false, "no progress line");

namespace {

constexpr const char* kTool = "taso-gen";

// Under mpirun, an error in one rank ends them all: the others would wait for it forever.
int Ended(taso::gen::Team& team, int exit_code) {
  if (team.size() > 1) team.Abandon(exit_code);
  return exit_code;
}

// Before the long run, not after: an output that cannot be written (rank 0's).
absl::Status ProbeOutput(const std::string& out) {
  std::ofstream probe(out + ".tmp");
  if (!probe) return absl::PermissionDeniedError("cannot write '" + out + "'");
  probe.close();
  std::remove((out + ".tmp").c_str());
  return absl::OkStatus();
}

// mpirun binds each rank to one core by default, where its threads would take turns.
void WarnIfBound(int threads) {
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0 || CPU_COUNT(&cpus) >= threads) return;
  std::fprintf(stderr, "taso-gen: warning: %d threads bound to %d CPU (start mpirun with --bind-to none)\n", threads,
               CPU_COUNT(&cpus));
}

}  // namespace

int main(int argc, char** argv) {
  // Started by mpirun: one rank of the job (generator/team.h); else this process alone.
  auto joined = taso::gen::JoinTeam(&argc, &argv);
  if (!joined.ok()) return taso::cli::Fail(kTool, joined.status());
  taso::gen::Team& team = **joined;
  auto args = taso::cli::Init(argc, argv, "taso-gen -k K -o rules.pb [--ops LIST] [--changing OP] [--text]");
  if (!args.empty()) return Ended(team, taso::cli::Usage(kTool, "unexpected argument '" + args[0] + "'"));
  const std::string out = absl::GetFlag(FLAGS_o);
  if (out.empty()) return Ended(team, taso::cli::Usage(kTool, "no output file given (-o rules.pb)"));
  taso::gen::GenerateOptions options;
  options.max_ops = absl::GetFlag(FLAGS_k);
  const std::string ops = absl::GetFlag(FLAGS_ops);
  if (!ops.empty()) options.ops = absl::StrSplit(ops, ',', absl::SkipEmpty());
  options.threads = std::max(1, absl::GetFlag(FLAGS_threads));
  options.max_memory_mb = absl::GetFlag(FLAGS_max_memory_mb);
  options.max_disk_mb = absl::GetFlag(FLAGS_max_disk_mb);
  options.spill_dir = absl::GetFlag(FLAGS_spill_dir);
  options.shards = absl::GetFlag(FLAGS_shards);
  options.seed = absl::GetFlag(FLAGS_seed);
  options.changing = absl::GetFlag(FLAGS_changing);
  options.progress = !absl::GetFlag(FLAGS_quiet);
  if (options.max_ops < 1 || options.max_ops > taso::gen::kMaxSupportedOps)
    return Ended(team, taso::cli::Fail(kTool, absl::InvalidArgumentError(
                                                  absl::StrCat("-k ", options.max_ops, " is not supported (1 to ",
                                                               taso::gen::kMaxSupportedOps, ")"))));
  if (team.rank() == 0)
    if (absl::Status s = ProbeOutput(out); !s.ok()) return Ended(team, taso::cli::Fail(kTool, s));
  if (team.rank() == 0) WarnIfBound(options.threads);
  // The spill folders of runs killed outright before are removed now (cli::Init has this
  // run's removed if it is interrupted).
  for (const std::string& line : taso::gen::RemoveStaleSpillFolders(options.spill_dir))
    std::fprintf(stderr, "taso-gen: %s\n", line.c_str());
  std::string command = "taso-gen -k " + std::to_string(options.max_ops);
  if (!ops.empty()) command += " --ops " + ops;
  if (!options.changing.empty()) command += " --changing " + options.changing;
  // The rules are written as they come: at K=4 they do not fit in memory at once.
  taso::gen::RuleFileWriter writer(out, absl::GetFlag(FLAGS_text), command);
  taso::gen::GenerateReport report;
  if (absl::Status s = taso::gen::GenerateTo(options, &report, writer, team); !s.ok())
    return Ended(team, taso::cli::Fail(kTool, s));
  if (team.rank() != 0) return 0;  // rank 0 writes and reports for all
  std::printf("taso-gen: K=%d, %d operator variants over %d inputs (%s)\n%s", options.max_ops, report.variants,
              report.inputs, absl::StrJoin(report.operators, ",").c_str(), report.Table().c_str());
  std::printf("wrote %zu rules to %s\n", writer.rules(), out.c_str());
  return 0;
}
