// taso-opt MODEL.onnx -o OUT.onnx [--rules FILE] [--backend cpu|cuda|analytic] [--cost-cache FILE] [--alpha A]
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
#include "taso/cost_cache.h"
#include "taso/cpu_cost.h"
#include "taso/cuda_cost.h"
#include "taso/kernel_executor.h"
#include "taso/executor.h"
#include "taso/fold.h"
#include "taso/inference_fusion.h"
#include "taso/layouts.h"
#include "taso/measured_cost.h"
#include "taso/onnx_io.h"
#include "taso/search.h"
#include "taso/status_macros.h"

#ifndef TASO_SOURCE_DIR
#define TASO_SOURCE_DIR "."
#endif

ABSL_FLAG(std::string, o, "", "where to write the optimized model");
ABSL_FLAG(std::string, rules, TASO_SOURCE_DIR "/rules/taso_k3.pb", "the rule database");
ABSL_FLAG(std::string, backend, "cpu",
          "cost model: cpu (oneDNN kernel times, measured), cuda (cuDNN/cuBLAS kernel times on the GPU, measured), "
          "analytic (roofline)");
ABSL_FLAG(std::string, cost_cache, "", "the measured-cost cache file (default: ~/.cache/taso/costs.sqlite; none: no cache)");
ABSL_FLAG(double, alpha, 1.05, "keep graphs costing less than alpha times the best");
ABSL_FLAG(int64_t, budget, 1000, "graphs expanded at most");
ABSL_FLAG(double, time_limit, 40, "search time limit in seconds (the self-check and export come after it)");
ABSL_FLAG(int64_t, max_queue, 1000, "graphs waiting in the search queue at most (bounds memory)");
ABSL_FLAG(std::string, report, "", "also write the summary as JSON to this file");
ABSL_FLAG(bool, skip_self_check, false, "do not run both graphs to compare them (for very large models)");
ABSL_FLAG(bool, allow_unproved, false, "use a rules file that taso-verify has not proved (--write-proved)");
ABSL_FLAG(uint64_t, seed, 1, "seed of the self-check's random inputs");
ABSL_FLAG(std::string, search, "",
          "what to search: substitutions, layouts or both (default: both on the cpu backend, substitutions on "
          "cuda and analytic, which have no layout choices)");
ABSL_FLAG(int, measure, 0,
          "time this many runs of the original and of the optimized graph with the backend's executor (cpu, or cuda "
          "with --backend cuda), in turn, on four pairs of executors made in both orders, and report the "
          "medians' geometric means");

namespace {

constexpr const char* kTool = "taso-opt";
// The least estimated gain of the search for which its graph replaces the input's (about
// the spread of repeated kernel measurements).
constexpr double kMinGain = 0.005;

// The largest output difference the self-check accepts, relative to the outputs' size:
// rewrites reorder float sums.
bool CloseEnough(const taso::TensorMap& a, const taso::TensorMap& b, double* diff) {
  *diff = taso::MaxAbsDifference(a, b);
  return taso::RelativeDifference(a, b) <= 1e-3;
}

// What taso-opt prints and writes with --report.
struct Summary {
  std::string backend, search;
  double cost_before = 0, cost_after = 0;  // estimated, of the imported and the optimized graph
  int blocked_nodes = 0, layout_conversions = 0;
  bool checked = false;
  double diff = 0;
  int measure_runs = 0;  // 0: not measured
  std::string executor;  // which one measured: the backend's (cpu, or cuda)
  double measured_before = 0, measured_after = 0;
  double measure_seconds = 0;  // what measuring took (making the executors included)
};

std::string Json(const taso::SearchResult& r, const Summary& s) {
  std::vector<std::string> applied;
  for (const auto& [rule, n] : r.rules_applied) applied.push_back(absl::StrCat("\"", rule, "\": ", n));
  const std::string measured =
      s.measure_runs == 0 ? "null"
                          : absl::StrCat("{\"executor\": \"", s.executor, "\", \"runs\": ", s.measure_runs, ", \"before_ms\": ", s.measured_before * 1e3,
                                         ", \"after_ms\": ", s.measured_after * 1e3, ", \"seconds\": ", s.measure_seconds, "}");
  return absl::StrCat("{\n  \"backend\": \"", s.backend, "\",\n  \"search\": \"", s.search,
                      "\",\n  \"blocked_nodes\": ", s.blocked_nodes, ",\n  \"layout_conversions\": ",
                      s.layout_conversions, ",\n  \"cost_before_ms\": ", s.cost_before * 1e3,
                      ",\n  \"cost_after_ms\": ", s.cost_after * 1e3, ",\n  \"search_cost_before_ms\": ",
                      r.initial_cost * 1e3, ",\n  \"search_cost_after_ms\": ", r.best_cost * 1e3,
                      ",\n  \"search_seconds\": ", r.seconds, ",\n  \"expansions\": ", r.expansions,
                      ",\n  \"graphs_seen\": ", r.graphs_seen,
                      ",\n  \"stopped_by_limit\": ", r.stopped_by_limit ? "true" : "false",
                      ",\n  \"self_check\": ", s.checked ? absl::StrCat("{\"max_abs_difference\": ", s.diff, "}") : "null",
                      ",\n  \"measured\": ", measured,
                      ",\n  \"rules_applied\": {", absl::StrJoin(applied, ", "), "}\n}\n");
}

// Executor pairs that --measure makes (taso::CompareGraphs says why more than one).
constexpr int kMeasurePairs = 4;

// End-to-end times of both graphs on the backend's executor, run in turn.
absl::Status MeasureBoth(const taso::Graph& before, const taso::Graph& after, Summary& s) {
  const auto start = std::chrono::steady_clock::now();
  const taso::TensorMap inputs = taso::RandomInputs(before, 3);
  ASSIGN_OR_RETURN(taso::GraphComparison c, taso::CompareGraphs(s.executor, before, after, inputs, s.measure_runs, kMeasurePairs));
  // The measured graphs must agree too (the optimized one at its layouts, on the backend's kernels).
  double diff = 0;
  if (!CloseEnough(c.a_outputs, c.b_outputs, &diff))
    return absl::InternalError(absl::StrCat("on the ", s.executor, " executor the optimized graph's outputs differ by ",
                                            diff, " from the original's"));
  s.measured_before = c.a_seconds;
  s.measured_after = c.b_seconds;
  s.measure_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  auto args = taso::cli::Init(argc, argv,
                              "taso-opt MODEL.onnx -o OUT.onnx [--rules FILE] [--backend cpu|cuda|analytic] [--cost-cache FILE] [--alpha A] "
                              "[--budget N] [--time-limit S] [--report FILE]");
  if (args.size() != 1) return taso::cli::Usage(kTool, "expected one ONNX model");
  const std::string out = absl::GetFlag(FLAGS_o);
  if (out.empty()) return taso::cli::Usage(kTool, "give the output file with -o");
  const std::string backend = absl::GetFlag(FLAGS_backend);
  if (backend != "analytic" && backend != "cpu" && backend != "cuda")
    return taso::cli::Usage(kTool, absl::StrCat("unknown backend '", backend, "' (cpu, analytic, cuda)"));
  std::string search = absl::GetFlag(FLAGS_search);
  if (search.empty()) search = backend == "cpu" ? "both" : "substitutions";
  if (search != "substitutions" && search != "layouts" && search != "both")
    return taso::cli::Usage(kTool, absl::StrCat("unknown --search '", search, "' (substitutions, layouts, both)"));
  const bool with_layouts = search != "substitutions", with_substitutions = search != "layouts";
  if (with_layouts && backend != "cpu")
    return taso::cli::Usage(kTool, "layouts are searched on the cpu backend only (oneDNN's blocked layouts): use --backend cpu");
  if (!(absl::GetFlag(FLAGS_alpha) >= 1.0)) return taso::cli::Usage(kTool, "--alpha must be at least 1");
  if (absl::GetFlag(FLAGS_budget) < 0 || !(absl::GetFlag(FLAGS_time_limit) >= 0))
    return taso::cli::Usage(kTool, "--budget and --time-limit must not be negative");

  auto model = taso::ImportOnnxFile(args[0], {.fold_shape_arithmetic = true});
  if (!model.ok()) return taso::cli::Fail(kTool, model.status());
  // The self-check runs the whole graph: say so now, not after the search.
  if (!absl::GetFlag(FLAGS_skip_self_check))
    for (taso::NodeId n = 0; n < model->graph.num_nodes(); ++n)
      if (const taso::Node& node = model->graph.node(n); node.op->is_opaque())
        return taso::cli::Fail(kTool, absl::FailedPreconditionError(absl::StrCat(
                                          "the self-check cannot run node '", node.name, "' (ONNX operator ",
                                          node.onnx_node ? node.onnx_node->op_type() : "?",
                                          " is outside the operator library); pass --skip_self_check to optimize ",
                                          "the graph around such nodes without the check")));
  auto rules = taso::ReadRuleSet(absl::GetFlag(FLAGS_rules));
  if (!rules.ok()) return taso::cli::Fail(kTool, rules.status());
  if (rules->proved_by.empty() && !absl::GetFlag(FLAGS_allow_unproved))
    return taso::cli::Fail(kTool, absl::FailedPreconditionError(absl::StrCat(
                                      absl::GetFlag(FLAGS_rules), " holds rules not proved: prove them with taso-verify ",
                                      "--write-proved, or pass --allow-unproved")));
  const std::vector<taso::RuleMatcher> matchers = taso::PrepareRules(rules->rules);

  std::unique_ptr<taso::CostModel> cost_model;
  taso::MeasuredCost* measured = nullptr;
  taso::CpuCost* cpu = nullptr;
  if (backend != "analytic") {
    std::unique_ptr<taso::CostCache> cache;
    std::string path = absl::GetFlag(FLAGS_cost_cache);
    if (path != "none") {
      auto opened = taso::CostCache::Open(path.empty() ? taso::DefaultCostCachePath() : path);
      if (!opened.ok()) return taso::cli::Fail(kTool, opened.status());
      cache = std::move(*opened);
    }
    if (backend == "cpu") {
      auto c = std::make_unique<taso::CpuCost>(std::move(cache));
      cpu = c.get();
      measured = c.get();
      cost_model = std::move(c);
    } else {
      auto c = taso::MakeCudaCost(std::move(cache));
      if (!c.ok()) return taso::cli::Fail(kTool, c.status());
      measured = c->get();
      cost_model = std::move(*c);
    }
  } else {
    cost_model = std::make_unique<taso::AnalyticCost>();
  }
  // The joint search prices each graph at its best layouts.
  std::unique_ptr<taso::LayoutAwareCost> layout_cost;
  if (with_layouts) layout_cost = std::make_unique<taso::LayoutAwareCost>(*cpu);
  taso::CostModel& cost = layout_cost ? static_cast<taso::CostModel&>(*layout_cost) : *cost_model;
  taso::SearchOptions options;
  options.alpha = absl::GetFlag(FLAGS_alpha);
  options.budget = with_substitutions ? absl::GetFlag(FLAGS_budget) : 0;
  options.time_limit = absl::GetFlag(FLAGS_time_limit);
  options.max_queue = std::max<int64_t>(1, absl::GetFlag(FLAGS_max_queue));
  const bool tty = isatty(fileno(stderr));
  if (tty)
    options.progress = [](int64_t expansions, double best) {
      std::fprintf(stderr, "\rsearch: %lld graphs expanded, best cost %.4f ms", static_cast<long long>(expansions),
                   best * 1e3);
    };
  // Batch normalizations, biases and relus are folded into the convolutions, then each
  // bias is set apart again so that the rules (whose convolutions have none) match; after
  // the search they go back in.
  auto fused = taso::FuseIntoConvolutions(model->graph);
  if (!fused.ok()) return taso::cli::Fail(kTool, fused.status());
  auto separated = taso::SeparateConvolutionBias(*fused);
  if (!separated.ok()) return taso::cli::Fail(kTool, separated.status());
  taso::SearchResult result = taso::Optimize(*separated, matchers, cost, options);
  if (tty) std::fprintf(stderr, "\n");

  // A gain within the measurements' noise is no reason to rewrite the user's graph.
  const bool keep_input = result.best_cost > result.initial_cost * (1 - kMinGain);
  const bool dropped = keep_input && !result.rules_applied.empty();
  if (keep_input) result.rules_applied.clear();
  auto weights_folded = taso::FoldWeights(keep_input ? *separated : result.best);
  if (!weights_folded.ok()) return taso::cli::Fail(kTool, weights_folded.status());
  auto folded = taso::FuseIntoConvolutions(*weights_folded);
  if (!folded.ok()) return taso::cli::Fail(kTool, folded.status());
  Summary summary;
  summary.backend = backend;
  summary.search = search;
  summary.cost_before = taso::GraphCost(model->graph, *cost_model);  // as it is, all plain
  summary.cost_after = taso::GraphCost(*folded, *cost_model);
  // What the backend's executor runs: the optimized graph at its layouts.
  taso::Graph run_graph = *folded;
  if (with_layouts) {
    taso::CpuLayouts layouts(*cpu);
    const taso::CpuLayouts::Plan plan = layouts.Choose(*folded);
    auto applied = layouts.Apply(*folded, plan);
    if (!applied.ok()) return taso::cli::Fail(kTool, applied.status());
    run_graph = std::move(*applied);
    summary.cost_after = plan.seconds;
    summary.layout_conversions = plan.conversions;
    for (bool b : plan.blocked) summary.blocked_nodes += b;
  }
  double& diff = summary.diff;
  const bool check = summary.checked = !absl::GetFlag(FLAGS_skip_self_check);
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
  summary.executor = backend == "cuda" ? "cuda" : "cpu";
  if ((summary.measure_runs = std::max(0, absl::GetFlag(FLAGS_measure))) > 0)
    if (auto s = MeasureBoth(model->graph, run_graph, summary); !s.ok()) return taso::cli::Fail(kTool, s);
  taso::OnnxModel optimized{std::move(*folded), model->shell, model->opset};
  if (auto s = taso::ExportOnnxFile(optimized, out); !s.ok()) return taso::cli::Fail(kTool, s);

  std::printf("%s: %d nodes -> %d nodes; %zu rule instances (both directions)\n", args[0].c_str(),
              model->graph.num_nodes(), optimized.graph.num_nodes(), matchers.size());
  std::printf("estimated cost (%s): %.4f ms -> %.4f ms (%.2fx); the search itself: %.4f ms -> %.4f ms\n",
              backend.c_str(), summary.cost_before * 1e3, summary.cost_after * 1e3,
              summary.cost_after > 0 ? summary.cost_before / summary.cost_after : 1.0,
              result.initial_cost * 1e3, result.best_cost * 1e3);
  if (with_layouts)
    std::printf("layouts: %d nodes blocked, %d layout conversions\n", summary.blocked_nodes, summary.layout_conversions);
  std::printf("search (%s): %.2f s, %lld graphs expanded, %lld seen%s\n", search.c_str(), result.seconds,
              static_cast<long long>(result.expansions), static_cast<long long>(result.graphs_seen),
              result.stopped_by_limit ? " (stopped by --budget or --time-limit)" : "");
  if (measured)
    std::printf("costs (%s): %d measured, %d from the cache, %d estimated (no %s kernel)\n",
                measured->device().c_str(), measured->counts().measured, measured->counts().cached,
                measured->counts().estimated, backend.c_str());
  if (dropped)
    std::printf("substitutions: none kept, the best gain found (%.2f%%) is below %.1f%%\n",
                100 * (1 - result.best_cost / result.initial_cost), 100 * kMinGain);
  for (const auto& [rule, n] : result.rules_applied) std::printf("  applied %-10s x%d\n", rule.c_str(), n);
  if (check) std::printf("self-check: max |difference| of outputs %g\n", diff);
  if (summary.measure_runs > 0)
    std::printf("measured (%s executor, medians of %d runs in turn over %d executor pairs): %.3f ms -> %.3f ms (%.2fx)\n",
                summary.executor.c_str(), summary.measure_runs, kMeasurePairs, summary.measured_before * 1e3, summary.measured_after * 1e3,
                summary.measured_before / summary.measured_after);
  std::printf("wrote %s\n", out.c_str());
  if (const std::string report = absl::GetFlag(FLAGS_report); !report.empty()) {
    std::ofstream f(report);
    f << Json(result, summary);
    if (!f) return taso::cli::Fail(kTool, absl::PermissionDeniedError(absl::StrCat("cannot write ", report)));
  }
  return 0;
}
