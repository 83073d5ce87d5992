// taso-verify RULES [--axioms DIR] [--timeout-ms N] [--jobs N] [--write-proved OUT]:
// proves every rule of a rule database from the operator axioms with Z3.
// taso-verify --check-axioms: checks and validates the axioms themselves.
// taso-verify RULES --explain NAME: the rule and the axioms its proof uses (NAME as taso-opt
// reports it; a "<file stem>:" prefix is dropped, RULES being that file).
#include <algorithm>
#include <cstdio>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "axiom_checks.h"
#include "axiom_validation.h"
#include "cli.h"
#include "explain.h"
#include "prover.h"
#include "taso/ir/file_limits.h"
#include "taso/rules/rules.h"

#ifndef TASO_SOURCE_DIR
#define TASO_SOURCE_DIR "."
#endif

ABSL_FLAG(std::string, axioms, TASO_SOURCE_DIR "/axioms", "directory of the axiom files");
ABSL_FLAG(uint32_t, timeout_ms, 0,
          "wall-clock limit of one Z3 query, in milliseconds (0: each kind of query's own: 60000 for a rule's proof "
          "and an axiom's validation case, guards behind their resource budgets, and the consistency check)");
ABSL_FLAG(uint32_t, rlimit, taso::verify::ProveOptions{}.budget.rlimit,
          "Z3 resource budget of one rule's proof: a rule not proved within it is over budget (unlike a time "
          "limit, the same on a busy machine as on an idle one)");
ABSL_FLAG(int, jobs, 2, "queries run at once");
ABSL_FLAG(bool, verbose, false, "print every rule's outcome, not only the failures");
ABSL_FLAG(std::string, write_proved, "",
          "write the rules that were proved to this file (a rule database without the others)");
ABSL_FLAG(int64_t, max_rules_bytes, taso::kDefaultMaxRuleFileBytes,
          "refuse a rule database larger than this many bytes");
ABSL_FLAG(bool, check_axioms, false, "check the axiom set: consistent, and which axioms follow from the others");
ABSL_FLAG(std::string, explain, "",
          "prove only the rule of this name (as taso-opt prints it, e.g. r0023/0, r0128/1~ or gemm_merges_k4:r0320; "
          "a \"<file stem>:\" prefix is dropped: give that file as RULES) and print it with the axioms its proof "
          "uses");

namespace {

// The --timeout-ms flag, or `fallback` when it is not given.
unsigned TimeoutMsOr(unsigned fallback) {
  const unsigned flag = absl::GetFlag(FLAGS_timeout_ms);
  return flag != 0 ? flag : fallback;
}

int CheckAxioms(const taso::verify::AxiomSet& axioms) {
  using namespace taso::verify;
  AxiomCheckOptions check;
  check.timeout_ms = TimeoutMsOr(check.timeout_ms);
  check.jobs = std::max(1, absl::GetFlag(FLAGS_jobs));
  const AxiomCheckReport report = CheckAxiomSet(axioms, check);
  const char* consistent = report.consistent == Finding::kYes  ? "yes (a model exists)"
                           : report.consistent == Finding::kNo ? "NO: the axioms contradict each other"
                                                               : "unknown within the time limit";
  std::printf("taso-verify: %zu axioms; consistent: %s\n", axioms.axioms.size(), consistent);
  std::printf(
      "redundancy (each axiom against all the others, Z3 resource limit %u): %zu follow from the others, %zu shown "
      "not to, %zu undecided within the limit%s\n",
      check.rlimit, report.redundant.size(), report.independent.size(), report.undecided.size(),
      report.redundant.empty() ? "" : "; following:");
  for (const std::string& name : report.redundant) std::printf("  %s\n", name.c_str());
  ValidationOptions options;
  options.budget.timeout_ms = TimeoutMsOr(options.budget.timeout_ms);
  options.jobs = std::max(1, absl::GetFlag(FLAGS_jobs));
  const auto start = std::chrono::steady_clock::now();
  auto validated = ValidateAxioms(axioms, options);
  if (!validated.ok()) return taso::cli::Fail("taso-verify", validated.status());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  size_t valid = 0;
  int64_t cases = 0;
  const AxiomValidation* costliest = nullptr;
  for (const AxiomValidation& v : *validated) {
    cases += v.cases;
    if (!costliest || v.max_resources > costliest->max_resources) costliest = &v;
    if (v.holds == Finding::kYes) {
      ++valid;
      continue;
    }
    std::printf("  %s %s: %s\n", v.axiom.c_str(), v.holds == Finding::kNo ? "is FALSE" : "could not be checked",
                v.detail.c_str());
  }
  std::printf(
      "validated against the reference kernels: %zu of %zu hold on all %lld cases (dimensions %s, else %s; ranks %s; "
      "%.1f s; costliest query %s, %llu resources of a budget of %u)\n",
      valid, validated->size(), static_cast<long long>(cases), absl::StrJoin(options.dims, ",").c_str(),
      absl::StrJoin(options.wider_dims, ",").c_str(), absl::StrJoin(options.ranks, ",").c_str(), wall,
      costliest ? costliest->axiom.c_str() : "-",
      static_cast<unsigned long long>(costliest ? costliest->max_resources : 0), options.budget.rlimit);
  return report.consistent == Finding::kNo || valid != validated->size() ? 1 : 0;
}

// Prints rule `name` of `rules` (read from `path`) and the axioms its proof uses. `name` may be
// qualified by its file's stem, as taso-opt names the rules of its second and later databases;
// a stem other than `path`'s is refused rather than explaining another file's rule of that number.
int Explain(const taso::verify::AxiomSet& axioms, const taso::RuleSet& rules, const std::string& path,
            const std::string& name) {
  using namespace taso::verify;
  constexpr const char* kTool = "taso-verify";
  const std::string in_file = taso::RuleNameInFile(name);
  if (in_file != name && taso::QualifiedRuleName(path, in_file) != name) {
    const std::string message = absl::StrCat("rule '", name, "' is named after another file than ", path);
    return taso::cli::Fail(kTool, absl::NotFoundError(message));
  }
  auto rule = FindRuleByName(rules, in_file);
  if (!rule.ok()) return taso::cli::Fail(kTool, rule.status());
  auto encoded = EncodeRules(axioms, {*rule});
  if (!encoded.ok()) return taso::cli::Fail(kTool, encoded.status());
  QueryBudget budget = ProveOptions{}.budget;
  budget.rlimit = absl::GetFlag(FLAGS_rlimit);
  budget.timeout_ms = TimeoutMsOr(budget.timeout_ms);
  auto used = AxiomsOfProof(axioms, encoded->front(), budget);
  if (!used.ok()) return taso::cli::Fail(kTool, used.status());
  std::printf("%s\n", taso::RuleText(*rule).c_str());
  std::printf("proved by Z3 from %zu of the %zu axioms (an unsat core of the proof):\n", used->size(),
              axioms.axioms.size());
  for (const Axiom* a : *used)
    std::printf("  %s (axioms/%s:%d)\n    %s\n", a->name.c_str(), a->file.c_str(), a->line, a->text.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace taso::verify;
  constexpr const char* kTool = "taso-verify";
  auto args = taso::cli::Init(
      argc, argv,
      "taso-verify RULES [--axioms DIR] [--timeout-ms N] [--jobs N] [--explain NAME] | taso-verify --check-axioms");
  auto axioms = LoadAxioms(absl::GetFlag(FLAGS_axioms));
  if (absl::GetFlag(FLAGS_check_axioms)) {
    if (!args.empty()) return taso::cli::Usage(kTool, "--check-axioms takes no rules file");
    if (!axioms.ok()) return taso::cli::Fail(kTool, axioms.status());
    return CheckAxioms(*axioms);
  }
  if (args.size() != 1) return taso::cli::Usage(kTool, "give one rules file");
  if (!axioms.ok()) return taso::cli::Fail(kTool, axioms.status());
  const int64_t max_rules_bytes = absl::GetFlag(FLAGS_max_rules_bytes);
  if (absl::Status valid = taso::ValidateFileLimit(max_rules_bytes, "--max-rules-bytes"); !valid.ok())
    return taso::cli::Usage(kTool, std::string(valid.message()));
  if (absl::Status size = taso::CheckFileSize(args[0], max_rules_bytes, "rules file", "--max-rules-bytes"); !size.ok())
    return taso::cli::Fail(kTool, size);
  auto rules = taso::ReadRuleSet(args[0]);
  if (!rules.ok()) return taso::cli::Fail(kTool, rules.status());
  if (const std::string name = absl::GetFlag(FLAGS_explain); !name.empty())
    return Explain(*axioms, *rules, args[0], name);
  auto encoded = EncodeRules(*axioms, rules->rules);
  if (!encoded.ok()) return taso::cli::Fail(kTool, encoded.status());
  ProveOptions options;
  options.budget.rlimit = absl::GetFlag(FLAGS_rlimit);
  options.budget.timeout_ms = TimeoutMsOr(options.budget.timeout_ms);
  options.jobs = std::max(1, absl::GetFlag(FLAGS_jobs));
  const auto start = std::chrono::steady_clock::now();
  std::vector<Outcome> outcomes = ProveRules(*axioms, *encoded, options);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  size_t counts[3] = {0, 0, 0};
  const Outcome* costliest = nullptr;
  for (const Outcome& o : outcomes) {
    ++counts[static_cast<int>(o.verdict)];
    if (o.verdict != Verdict::kProved || absl::GetFlag(FLAGS_verbose))
      std::printf("%-12s %-11s %.3f s %12llu resources\n", o.rule.c_str(), VerdictName(o.verdict), o.seconds,
                  static_cast<unsigned long long>(o.resources));
    if (o.verdict == Verdict::kProved && (!costliest || o.resources > costliest->resources)) costliest = &o;
  }
  std::printf("taso-verify: %zu rules, %zu axioms: %zu proved, %zu not proved, %zu over budget (%.1f s, %d jobs",
              outcomes.size(), axioms->axioms.size(), counts[0], counts[1], counts[2], wall, options.jobs);
  if (costliest)
    std::printf("; costliest proof %s, %llu resources of a budget of %u, %.3f s", costliest->rule.c_str(),
                static_cast<unsigned long long>(costliest->resources), options.budget.rlimit, costliest->seconds);
  std::printf(")\n");
  if (const std::string out = absl::GetFlag(FLAGS_write_proved); !out.empty()) {
    taso::RuleSet proved = *rules;
    proved.rules.clear();
    for (size_t i = 0; i < outcomes.size(); ++i)
      if (outcomes[i].verdict == Verdict::kProved) proved.rules.push_back(rules->rules[i]);
    proved.command = absl::StrCat(rules->command, " && taso-verify --write-proved (",
                                  outcomes.size() - proved.rules.size(), " rules not proved left out)");
    proved.proved_by = absl::StrCat("taso-verify from ", axioms->axioms.size(), " axioms");
    if (auto s = taso::WriteRuleSet(proved, out); !s.ok()) return taso::cli::Fail(kTool, s);
    std::printf("wrote %zu proved rules to %s\n", proved.rules.size(), out.c_str());
    return 0;
  }
  return counts[0] == outcomes.size() ? 0 : 1;
}
