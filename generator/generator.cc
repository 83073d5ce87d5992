#include "generator.h"

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "taso/status_macros.h"

namespace taso::gen {
namespace {

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The live progress line of the enumeration (on a terminal only).
void ShowEnumerationProgress(bool tty, double done, uint64_t graphs) {
  if (tty)
    std::fprintf(stderr, "\r  enumerating: %5.1f%% of branches, %llu graphs   ", 100 * done,
                 static_cast<unsigned long long>(graphs));
}

// Enumerates every graph and keeps those sharing a fingerprint with another.
absl::StatusOr<std::vector<Fingerprinted>> EnumerateShared(const Enumerator& e, const GenerateOptions& options,
                                                           bool tty, uint64_t* graphs) {
  EnumerationLimits limits;
  limits.threads = options.threads;
  limits.max_bytes = options.max_memory_mb << 20;
  limits.progress = [tty](double done, uint64_t graphs) { ShowEnumerationProgress(tty, done, graphs); };
  return e.Enumerate(limits, /*shared_only=*/true, graphs);
}

// How many fingerprints the sorted graphs share, and how many graphs share them.
void CountGroups(const std::vector<Fingerprinted>& groups, GenerateReport* report) {
  report->group_graphs = groups.size();
  for (size_t i = 0; i < groups.size(); ++i)
    report->groups += i == 0 || groups[i].fingerprint != groups[i - 1].fingerprint;
}

int CountOp(const RuleGraph& side, const std::string& op) {
  int n = 0;
  for (const RuleOp& o : side.ops) n += o.op->name() == op;
  return n;
}

// The rules changing how often `op` is applied, renamed r0000, r0001... in their order.
std::vector<Rule> RulesChanging(std::vector<Rule> rules, const std::string& op) {
  std::vector<Rule> kept;
  for (Rule& r : rules)
    if (CountOp(r.source, op) != CountOp(r.target, op)) kept.push_back(std::move(r));
  for (size_t i = 0; i < kept.size(); ++i) kept[i].name = absl::StrFormat("r%04d", i);
  return kept;
}

}  // namespace

uint64_t PeakRssMb() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) / 1024;
  return 0;
}

std::string GenerateReport::Table() const {
  std::string s;
  auto row = [&](const char* what, uint64_t n, const std::string& note) {
    absl::StrAppend(&s, absl::StrFormat("  %-28s %12d  %s\n", what, n, note));
  };
  row("graphs enumerated", graphs, absl::StrFormat("fingerprinted and sorted (%.2f s)", enumerate_s));
  row("fingerprint collisions", groups, absl::StrFormat("groups of %d graphs", group_graphs));
  row("candidate pairs", counts.candidates, "equal fingerprints");
  row("distinct up to renaming", counts.distinct, "");
  row("after input renaming", counts.after_renaming, "");
  row("after common subgraph", counts.after_common_subgraph, "");
  row("after float checks", counts.after_float_checks, absl::StrFormat("(pruning and checks %.2f s)", prune_s));
  row("parametric", counts.after_parameters, "= rules (parameter families merged)");
  if (!changing_op.empty())
    row("changing", changing, absl::StrCat("= rules (those applying ", changing_op, " more or less often)"));
  absl::StrAppend(&s, absl::StrFormat("  wall time %.2f s, peak memory %d MiB\n", total_s, peak_rss_mb));
  return s;
}

absl::StatusOr<RuleSet> Generate(const GenerateOptions& options, GenerateReport* report) {
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
  Enumerator e(set, options.max_ops, options.seed);
  const bool tty = options.progress && isatty(STDERR_FILENO);  // the live progress line

  auto t = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::vector<Fingerprinted> groups, EnumerateShared(e, options, tty, &report->graphs));
  report->enumerate_s = Since(t);
  CountGroups(groups, report);
  auto phase = [&](const std::string& line) {
    if (!options.progress) return;
    if (tty) std::fprintf(stderr, "\r%80s\r", "");
    std::fprintf(stderr, "  [%.1f s] %s\n", Since(start), line.c_str());
  };
  phase(absl::StrCat(report->graphs, " graphs enumerated; ", report->group_graphs, " share ", report->groups,
                     " fingerprints"));

  t = std::chrono::steady_clock::now();
  RuleSet rules;
  rules.max_ops = options.max_ops;
  rules.operators = set.op_names;
  rules.rules = FindRules(e, groups, options.threads, &report->counts, phase);
  report->changing_op = options.changing;
  if (!options.changing.empty()) rules.rules = RulesChanging(std::move(rules.rules), options.changing);
  report->changing = rules.rules.size();
  report->prune_s = Since(t);
  report->total_s = Since(start);
  report->peak_rss_mb = PeakRssMb();
  return rules;
}

}  // namespace taso::gen
