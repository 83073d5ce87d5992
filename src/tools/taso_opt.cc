// taso-opt MODEL.onnx -o OUT.onnx [--rules FILE] [--backend cpu|analytic] [--cost-cache FILE] [--alpha A]
// [--budget N] [--time-limit S] [--report FILE]: optimizes an ONNX model with the rule
// database by cost-based backtracking search, folds weight-only subgraphs, and writes
// the result only if it computes what the input computes (self-check).
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli.h"
#include "taso/cost.h"
#include "taso/executor.h"
#include "taso/fold.h"
#include "taso/measured_cost.h"
#include "taso/onnx_io.h"
#include "taso/search.h"

#ifndef TASO_SOURCE_DIR
#define TASO_SOURCE_DIR "."
#endif

ABSL_FLAG(std::string, o, "", "where to write the optimized model");
ABSL_FLAG(std::string, rules, TASO_SOURCE_DIR "/rules/taso_k3.pb", "the rule database");
ABSL_FLAG(std::string, backend, "cpu", "cost model: cpu (oneDNN kernel times, measured), analytic (roofline)");
ABSL_FLAG(std::string, cost_cache, "", "the measured-cost cache file (default: ~/.cache/taso/costs.sqlite; none: no cache)");
ABSL_FLAG(double, alpha, 1.05, "keep graphs costing less than alpha times the best");
ABSL_FLAG(int64_t, budget, 1000, "graphs expanded at most");
ABSL_FLAG(double, time_limit, 60, "search time limit in seconds");
ABSL_FLAG(int64_t, max_queue, 1000, "graphs waiting in the search queue at most (bounds memory)");
ABSL_FLAG(std::string, report, "", "also write the summary as JSON to this file");
ABSL_FLAG(bool, skip_self_check, false, "do not run both graphs to compare them (for very large models)");
ABSL_FLAG(bool, allow_unproved, false, "use a rules file that taso-verify has not proved (--write-proved)");
ABSL_FLAG(uint64_t, seed, 1, "seed of the self-check's random inputs");

namespace {

constexpr const char* kTool = "taso-opt";

// The largest output difference the self-check accepts, relative to the outputs' size:
// rewrites reorder float sums.
bool CloseEnough(const taso::TensorMap& a, const taso::TensorMap& b, double* diff) {
  *diff = taso::MaxAbsDifference(a, b);
  double scale = 1;
  for (const auto& [name, t] : a)
    for (float v : t.data) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  return std::isfinite(*diff) && *diff <= 1e-3 * scale;
}

std::string Json(const taso::SearchResult& r, double diff, bool checked, const std::string& backend) {
  std::vector<std::string> applied;
  for (const auto& [rule, n] : r.rules_applied) applied.push_back(absl::StrCat("\"", rule, "\": ", n));
  return absl::StrCat("{\n  \"backend\": \"", backend, "\",\n  \"cost_before_ms\": ", r.initial_cost * 1e3,
                      ",\n  \"cost_after_ms\": ", r.best_cost * 1e3, ",\n  \"search_seconds\": ", r.seconds,
                      ",\n  \"expansions\": ", r.expansions, ",\n  \"graphs_seen\": ", r.graphs_seen,
                      ",\n  \"stopped_by_limit\": ", r.stopped_by_limit ? "true" : "false",
                      ",\n  \"self_check\": ", checked ? absl::StrCat("{\"max_abs_difference\": ", diff, "}") : "null",
                      ",\n  \"rules_applied\": {", absl::StrJoin(applied, ", "), "}\n}\n");
}

}  // namespace

int main(int argc, char** argv) {
  auto args = taso::cli::Init(argc, argv,
                              "taso-opt MODEL.onnx -o OUT.onnx [--rules FILE] [--backend cpu|analytic] [--cost-cache FILE] [--alpha A] "
                              "[--budget N] [--time-limit S] [--report FILE]");
  if (args.size() != 1) return taso::cli::Usage(kTool, "expected one ONNX model");
  const std::string out = absl::GetFlag(FLAGS_o);
  if (out.empty()) return taso::cli::Usage(kTool, "give the output file with -o");
  const std::string backend = absl::GetFlag(FLAGS_backend);
  if (backend == "cuda")
    return taso::cli::Fail(kTool, absl::UnavailableError(
                                      "the cuda backend's kernel measurements are not built yet; use --backend cpu or analytic"));
  if (backend != "analytic" && backend != "cpu")
    return taso::cli::Usage(kTool, absl::StrCat("unknown backend '", backend, "' (cpu, analytic, cuda)"));
  if (!(absl::GetFlag(FLAGS_alpha) >= 1.0)) return taso::cli::Usage(kTool, "--alpha must be at least 1");
  if (absl::GetFlag(FLAGS_budget) < 0 || !(absl::GetFlag(FLAGS_time_limit) >= 0))
    return taso::cli::Usage(kTool, "--budget and --time-limit must not be negative");

  auto model = taso::ImportOnnxFile(args[0]);
  if (!model.ok()) return taso::cli::Fail(kTool, model.status());
  auto rules = taso::ReadRuleSet(absl::GetFlag(FLAGS_rules));
  if (!rules.ok()) return taso::cli::Fail(kTool, rules.status());
  if (rules->proved_by.empty() && !absl::GetFlag(FLAGS_allow_unproved))
    return taso::cli::Fail(kTool, absl::FailedPreconditionError(absl::StrCat(
                                      absl::GetFlag(FLAGS_rules), " holds rules not proved: prove them with taso-verify ",
                                      "--write-proved, or pass --allow-unproved")));
  const std::vector<taso::RuleMatcher> matchers = taso::PrepareRules(rules->rules);

  std::unique_ptr<taso::CostModel> cost_model;
  taso::CpuCost* cpu = nullptr;
  if (backend == "cpu") {
    std::unique_ptr<taso::CostCache> cache;
    std::string path = absl::GetFlag(FLAGS_cost_cache);
    if (path != "none") {
      auto opened = taso::CostCache::Open(path.empty() ? taso::DefaultCostCachePath() : path);
      if (!opened.ok()) return taso::cli::Fail(kTool, opened.status());
      cache = std::move(*opened);
    }
    auto c = std::make_unique<taso::CpuCost>(std::move(cache));
    cpu = c.get();
    cost_model = std::move(c);
  } else {
    cost_model = std::make_unique<taso::AnalyticCost>();
  }
  taso::CostModel& cost = *cost_model;
  taso::SearchOptions options;
  options.alpha = absl::GetFlag(FLAGS_alpha);
  options.budget = absl::GetFlag(FLAGS_budget);
  options.time_limit = absl::GetFlag(FLAGS_time_limit);
  options.max_queue = std::max<int64_t>(1, absl::GetFlag(FLAGS_max_queue));
  const bool tty = isatty(fileno(stderr));
  if (tty)
    options.progress = [](int64_t expansions, double best) {
      std::fprintf(stderr, "\rsearch: %lld graphs expanded, best cost %.4f ms", static_cast<long long>(expansions),
                   best * 1e3);
    };
  taso::SearchResult result = taso::Optimize(model->graph, matchers, cost, options);
  if (tty) std::fprintf(stderr, "\n");

  auto folded = taso::FoldWeights(result.best);
  if (!folded.ok()) return taso::cli::Fail(kTool, folded.status());
  double diff = 0;
  const bool check = !absl::GetFlag(FLAGS_skip_self_check);
  if (check) {
    const taso::TensorMap inputs = taso::RandomInputs(model->graph, absl::GetFlag(FLAGS_seed));
    auto before = taso::RunReference(model->graph, inputs);
    if (!before.ok()) return taso::cli::Fail(kTool, before.status());
    auto after = taso::RunReference(*folded, inputs);
    if (!after.ok()) return taso::cli::Fail(kTool, after.status());
    if (!CloseEnough(*before, *after, &diff))
      return taso::cli::Fail(kTool, absl::InternalError(absl::StrCat(
                                        "self-check failed: the optimized graph's outputs differ by ", diff,
                                        " from the original's; nothing written")));
  }
  taso::OnnxModel optimized{std::move(*folded), model->shell, model->opset};
  if (auto s = taso::ExportOnnxFile(optimized, out); !s.ok()) return taso::cli::Fail(kTool, s);

  std::printf("%s: %d nodes -> %d nodes; %zu rule instances (both directions)\n", args[0].c_str(),
              model->graph.num_nodes(), optimized.graph.num_nodes(), matchers.size());
  std::printf("estimated cost (%s): %.4f ms -> %.4f ms (%.2fx)\n", backend.c_str(), result.initial_cost * 1e3,
              result.best_cost * 1e3, result.best_cost > 0 ? result.initial_cost / result.best_cost : 1.0);
  std::printf("search: %.2f s, %lld graphs expanded, %lld seen%s\n", result.seconds,
              static_cast<long long>(result.expansions), static_cast<long long>(result.graphs_seen),
              result.stopped_by_limit ? " (stopped by --budget or --time-limit)" : "");
  if (cpu)
    std::printf("costs (%s): %d measured, %d from the cache, %d estimated (no cpu kernel)\n", cpu->device().c_str(),
                cpu->counts().measured, cpu->counts().cached, cpu->counts().estimated);
  for (const auto& [rule, n] : result.rules_applied) std::printf("  applied %-10s x%d\n", rule.c_str(), n);
  if (check) std::printf("self-check: max |difference| of outputs %g\n", diff);
  std::printf("wrote %s\n", out.c_str());
  if (const std::string report = absl::GetFlag(FLAGS_report); !report.empty()) {
    std::ofstream f(report);
    f << Json(result, diff, check, backend);
    if (!f) return taso::cli::Fail(kTool, absl::PermissionDeniedError(absl::StrCat("cannot write ", report)));
  }
  return 0;
}
