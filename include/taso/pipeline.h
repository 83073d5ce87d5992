// The optimizer as one call: an imported model goes through the named stages of
// OptimizeModel (fusions around convolutions, the search, the keep-input rule, weight
// folding, layouts, the self-check, optional measurement) and comes back optimized, with
// the figures that describe the run. Writing the model and its report is the caller's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "taso/backends/measured_cost.h"
#include "taso/onnx_io.h"
#include "taso/rules.h"
#include "taso/search.h"

namespace taso {

// What prices the graphs: kernels measured on the cpu (oneDNN) or the GPU (cuDNN and
// cuBLAS), or the roofline estimate.
enum class Backend { kCpu, kCuda, kAnalytic };
// What the search chooses: substitutions, data layouts (cpu only), or both jointly.
enum class SearchKind { kSubstitutions, kLayouts, kBoth };

// Names as the command line and the report spell them: cpu, cuda, analytic;
// substitutions, layouts, both.
absl::string_view BackendName(Backend backend);
std::optional<Backend> ParseBackend(absl::string_view name);
absl::string_view SearchKindName(SearchKind search);
std::optional<SearchKind> ParseSearchKind(absl::string_view name);
// Both on the cpu backend; substitutions on the others, which have no layout choices.
SearchKind DefaultSearchKind(Backend backend);

// The least estimated gain of the search for which its graph replaces the input's (about
// the spread of repeated kernel measurements).
inline constexpr double kMinSearchGain = 0.005;
// Executor pairs a measurement makes (taso::CompareGraphs says why more than one).
inline constexpr int kMeasurePairs = 4;

struct PipelineOptions {
  Backend backend = Backend::kCpu;
  SearchKind search = SearchKind::kBoth;  // layouts only on Backend::kCpu
  // The measured-cost cache file: empty, DefaultCostCachePath(); "none", no cache.
  std::string cost_cache;
  // Alpha, budget, time limit, queue bound and progress callback of the search; the
  // budget is taken as 0 when only layouts are searched.
  SearchOptions search_options;
  // Run both graphs with the reference kernels and fail if their outputs differ; a model
  // with operators outside the library is refused unless this is off.
  bool self_check = true;
  uint64_t seed = 1;     // of the self-check's random inputs
  int measure_runs = 0;  // > 0: time both graphs on the backend's executor
};

// The options' own consistency (the command line checks its flags before): alpha at
// least 1, budget and time limit not negative, a queue of at least one graph, layouts
// only on the cpu backend.
absl::Status ValidateOptions(const PipelineOptions& options);

struct PipelineResult {
  OnnxModel model;         // the optimized model, ready to export
  int nodes_before = 0;    // in the imported graph
  int rule_instances = 0;  // rule matchers: both directions of every instance
  // The search's figures and best graph; its rules_applied emptied when the input was kept.
  SearchResult search;
  // Rules applied by the search were dropped: their gain was below kMinSearchGain.
  bool substitutions_dropped = false;
  // Estimated by the backend's cost model: the imported graph as it is (all plain), and
  // the optimized one (at its layouts when they are searched).
  double cost_before = 0, cost_after = 0;
  struct Layouts {
    int blocked_nodes = 0, conversions = 0;
  };
  std::optional<Layouts> layouts;               // set when layouts are searched
  std::optional<double> self_check_difference;  // max |difference| of the outputs, when checked
  struct Measurement {
    Backend executor = Backend::kCpu;  // the backend's executor: cpu, or cuda
    int runs = 0;
    // One run of each graph: the geometric mean over executor pairs of the medians.
    double before_seconds = 0, after_seconds = 0;
    double seconds = 0;  // what measuring took, making the executors included
  };
  std::optional<Measurement> measured;
  struct CostSources {
    std::string device;
    MeasuredCost::Counts counts;
  };
  std::optional<CostSources> cost_sources;  // set on a measured backend
  // The inputs' symbolic dimensions (one entry per dim_param, or per unnamed dimension):
  // the size the search ran at, and whether the written model keeps the dimension.
  struct SymbolicDimension {
    std::string name;  // the dim_param, or input[axis] for an unnamed dimension
    int64_t built_at = 1;
    bool given = false;               // by --input-shape
    bool kept = false;                // written symbolic
    std::vector<int64_t> checked_at;  // sizes the self-check ran at besides built_at
    std::string why_fixed;            // when not kept
  };
  std::vector<SymbolicDimension> symbolic_dims;
  std::optional<double> symbolic_check_difference;  // max over the checks at other sizes
};

// Optimizes the model's graph with `rules` (applied as given: whether they are trusted,
// proved for example, is the caller's decision). Fails before any work when the
// options are inconsistent, the self-check cannot run the graph or the backend cannot
// be used; after it, when a stage fails or the self-check finds the outputs differ.
absl::StatusOr<PipelineResult> OptimizeModel(const OnnxModel& model, const std::vector<Rule>& rules,
                                             const PipelineOptions& options);

// Validates the model written at `path`: by the ONNX checker where it knows the opset
// (ExportOnnx ran it), else in ONNX Runtime through `ort_runner` (tools/ort/ort_run.js),
// which must load and run it and, where the reference executor can run the graph, give
// its outputs. Returns how it was checked (saying so plainly where nothing could check
// it: ONNX Runtime not installed); fails when ONNX Runtime refuses the model.
absl::StatusOr<std::string> ValidateWrittenModel(const OnnxModel& model, const std::string& path,
                                                 const std::string& ort_runner);

// The lines taso-opt prints about a run (the "wrote" line aside); `model_name` names the
// input model.
std::string SummaryText(const PipelineOptions& options, const PipelineResult& result, absl::string_view model_name);
// The run as JSON (taso-opt --report).
std::string JsonReport(const PipelineOptions& options, const PipelineResult& result);

}  // namespace taso
