// The optimizer as one call: an imported model goes through the named stages of
// OptimizeModel (fusions around convolutions, the search, the keep-input rule, weight
// folding, layouts, the self-check, optional measurement) and comes back optimized, with
// the figures that describe the run. Writing the model and its report is the caller's.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "taso/backends/measured_cost.h"
#include "taso/backends/runtime_timer.h"
#include "taso/egraph/engine.h"
#include "taso/onnx/onnx_io.h"
#include "taso/onnx/write_as_read.h"
#include "taso/rewrite/search.h"
#include "taso/rules/rules.h"

namespace taso {

// What prices the graphs: kernels measured on the cpu (oneDNN) or the GPU (cuDNN and
// cuBLAS), operators measured in ONNX Runtime, or the roofline estimate.
enum class Backend { kCpu, kCuda, kAnalytic, kOrt };
// The runtime the written model is optimized for: ONNX Runtime (CPU execution provider),
// or our own cpu or cuda executor. Its cost model prices the graphs unless another
// backend is named.
enum class Target { kOrt, kCpu, kCuda };
// What the search chooses: substitutions, data layouts (cpu only), or both jointly.
enum class SearchKind { kSubstitutions, kLayouts, kBoth };

// Names as the command line and the report spell them: cpu, cuda, analytic;
// substitutions, layouts, both.
absl::string_view BackendName(Backend backend);
std::optional<Backend> ParseBackend(absl::string_view name);
// ort, cpu, cuda.
absl::string_view TargetName(Target target);
std::optional<Target> ParseTarget(absl::string_view name);
// The backend whose costs price the graphs for `target`.
Backend TargetBackend(Target target);
// OK where the target's runtime can run here; else a message naming what is missing
// (for ort: Node.js, the worker script, onnxruntime-node) and the target to use instead.
absl::Status CheckTargetAvailable(Target target);
absl::string_view SearchKindName(SearchKind search);
std::optional<SearchKind> ParseSearchKind(absl::string_view name);
// Both on the cpu backend; substitutions on the others, which have no layout choices.
SearchKind DefaultSearchKind(Backend backend);

// How substitutions are searched: TASO's backtracking (Algorithm 2), or equality
// saturation and extraction (taso::egraph). Spelled backtracking, egraph.
enum class SearchEngine { kBacktracking, kEGraph };
absl::string_view SearchEngineName(SearchEngine engine);
std::optional<SearchEngine> ParseSearchEngine(absl::string_view name);

// The least estimated gain of the search for which its graph replaces the input's (about
// the spread of repeated kernel measurements).
inline constexpr double kMinSearchGain = 0.005;
// Executor pairs a measurement makes (taso::CompareGraphs says why more than one).
inline constexpr int kMeasurePairs = 4;

// A search engine's own figures: the backtracking search's (graphs expanded and seen) or
// the e-graph's (iterations, e-nodes, extraction); monostate where no search ran.
using EngineStats = std::variant<std::monostate, BacktrackingStats, egraph::EGraphStats>;

// The defaults are taso-opt's (its flags take them from here), but for the target, which
// the command picks where it runs (ort where ONNX Runtime is installed), and the backend,
// which is the target's unless named.
struct PipelineOptions {
  Target target = Target::kCpu;
  Backend backend = Backend::kCpu;
  SearchKind search = SearchKind::kBoth;  // layouts only on Backend::kCpu
  // The measured-cost cache file: empty, DefaultCostCachePath(); "none", no cache.
  std::string cost_cache;
  // Alpha, budget, time limit, queue bound and progress callback of the search; the
  // budget is taken as 0 when only layouts are searched.
  SearchOptions search_options;
  SearchEngine engine = SearchEngine::kEGraph;
  // The e-graph engine's limits, rule scheduler and extraction limits (search_options
  // are unused by it but for the layouts-only search, which both engines run as
  // backtracking with no expansion).
  egraph::EGraphOptions egraph;
  // Run both graphs with the reference kernels and fail if they differ: their outputs and,
  // where the graph holds operators outside the library, what reaches those (whose outputs
  // are fed the same random values in both). Off only for models too large to run.
  bool self_check = true;
  uint64_t seed = 1;     // of the self-check's random inputs
  int measure_runs = 0;  // > 0: time both graphs on the backend's executor
  // Told as each stage starts ("fusions", "search", "layouts", "self-check", "measuring"),
  // with what it works on; may be empty. The search's own progress is search_options'.
  std::function<void(absl::string_view stage, absl::string_view detail)> on_stage;
  // ONNX Runtime's intra-op threads, for its costs and timing; 0: as its default session
  // does (what a user's InferenceSession gets unless told otherwise).
  int ort_threads = 0;
  // Before the model is returned, time it against the input end to end in the target's
  // runtime and drop the rewrites that do not make it faster (speed_check.h). Needs a
  // timer: `timer`, else the target's runtime (ONNX Runtime; our executor on cpu and cuda
  // where it runs every node of the input).
  bool verify_speed = true;
  double verify_speed_seconds = 20;  // for ONNX Runtime's comparisons (OrtTimer::Options)
  // Not owned; overrides the target runtime's: for the speed check, and without it
  // (verify_speed false) for timing the regions where the written graph differs.
  RuntimeTimer* timer = nullptr;
  // Not owned; overrides the target runtime's (and `timer`) for timing the regions where
  // the written graph differs, with the speed check on or off.
  RuntimeTimer* region_timer = nullptr;
  // Not owned: prices operators instead of the analytic model, on Backend::kAnalytic only
  // (a stand-in whose prices a caller sets; the measured backends make their own).
  CostModel* cost_model = nullptr;
  // The most memory the graph's tensors may need together (CheckGraphMemory): a graph
  // needing more is refused before any work.
  int64_t max_memory_bytes = kDefaultMaxMemoryBytes;
};

// taso-opt's limit on a model's tensors where --max-memory-gb is not given: the memory
// `available` where that is more than kDefaultMaxMemoryBytes (a model a large machine
// holds is not refused), else kDefaultMaxMemoryBytes.
int64_t MachineMemoryLimit(std::optional<int64_t> available);

// About the most memory optimizing a model for `target` takes, its tensors as `stored`
// (StoredModelBytes): taso-opt's own process holds the tensors it reads into memory and an
// eighth more (joined weights, folded constants), a quarter of those it reads in place
// (mapped: the weights rewrites join or fold are computed into memory), and 512 MiB for
// the rest (the rules, the search, ONNX Runtime's library); where the target times models
// in this machine's memory, copies of every tensor beside it: one for ort (a session; the
// speed check's sessions check their own room too, NoRoomForSession), two for cpu (the
// two executors timed in turn), none for cuda (the GPU's memory). Measured: a 2.9 GB decoder
// read in place peaked at 0.72 GB beside its timer's sessions of 2.8 GB each, a 0.35 GB
// ViT read into memory at 1.3 GB with its sessions, a model of 8 MB at 0.33 GB.
int64_t MemoryToOptimize(const StoredTensorBytes& stored, Target target);
// Where `available` is known and less than MemoryToOptimize, the reason in one clause
// ("optimizing its 2.9 GB of tensors needs about ..."); else nullopt.
std::optional<std::string> TooLittleMemoryToOptimize(const StoredTensorBytes& stored, Target target,
                                                     std::optional<int64_t> available);

// The options' own consistency (the command line checks its flags before): alpha at
// least 1, budget and time limit not negative, a queue of at least one graph, layouts
// only on the cpu backend, the e-graph's limits positive and its extraction time at
// least its second opinions'.
absl::Status ValidateOptions(const PipelineOptions& options);

// What the self-check compared (pipeline/output_checks.h says how).
struct SelfCheckCoverage {
  int random_inputs = 0;  // run-time inputs fed random values
  int outputs = 0;        // graph outputs compared as tensors
  int opaque_inputs = 0;  // inputs of opaque nodes compared as tensors
  int by_source = 0;      // integer, boolean and other values compared by where they come from
  int library_nodes = 0;  // of the optimized graph
  // Of those, the ones run: the others compute exactly what nodes of the input graph do,
  // and the check takes their values from the input's run.
  int library_nodes_run = 0;
  // Opaque nodes whose float outputs were fed random values, by ONNX operator type.
  std::map<std::string, int> fed_opaque;
  double max_difference = 0;         // of the compared tensors
  std::vector<double> input_scales;  // random values were drawn in [-s, s] for each s
  std::string mismatch;              // where the graphs disagree; empty when they agree
};

// The file written run against the input file in the target's runtime on the same random
// inputs, output by output (WriteCheckedModel in written_model.h).
struct EndToEndCheck {
  std::string runtime;               // what ran both files
  std::vector<double> input_scales;  // float inputs drawn in [-s, s], for each s
  // The symbolic dimensions kept, run at another size too ("seq=5"); empty when none.
  std::string other_sizes;
  // The sizes with a dimension at 0 both files were run at too ("past=0, total=3"; "; "
  // between several); empty when none (or the input file fails there).
  std::string empty_sizes;
  int outputs = 0;            // compared at each scale (and size)
  double max_difference = 0;  // the largest |difference| of any output
  // The output whose difference is largest relative to its own size, that ratio, and
  // the inputs' range where it was.
  std::string worst;
  double worst_relative = 0, worst_input_scale = 1;
  // Why the files could not be compared (the runtime cannot run the input file); empty
  // when they were.
  std::string not_run;
};

struct PipelineResult {
  OnnxModel model;                        // the optimized model, ready to export
  int nodes_before = 0, nodes_after = 0;  // ONNX nodes of the imported graph and of `model`
  int rule_instances = 0;                 // rule matchers: both directions of every instance
  int rule_instances_unusable = 0;        // directed instances left out: the matcher cannot use them
  // What the search found, whichever engine ran, as the graph written has it: its
  // rules_applied and path those of that graph (none where the input is written), its
  // best graph and cost the e-graph's other extraction where that is written.
  SearchFound search;
  // The engine's own figures, with the stop reason it really had; none where no search ran.
  EngineStats engine;
  // Where the search's rewrites were dropped, their gain below kMinSearchGain: that gain,
  // a fraction of the search's starting cost (`search` may describe another graph since,
  // the e-graph's other extraction, where that is written).
  std::optional<double> dropped_search_gain;
  // Without the speed check, the search's rewrites were priced above the input as read
  // (the search starts from its cleaned-up form), so they were dropped and the input
  // written; the prices are kept here.
  struct EstimatedSlower {
    double rewritten_seconds = 0, input_seconds = 0;
  };
  std::optional<EstimatedSlower> estimated_slower;
  // Estimated by the backend's cost model: the imported graph as it is (all plain; on the
  // ort backend as ONNX Runtime runs it, folded and fused as by our clean-up), and the
  // optimized one (at its layouts when they are searched).
  double cost_before = 0, cost_after = 0;
  // On the ort backend, where the written graph differs from the input's: the nodes that
  // differ, with their neighbours, timed as two models (src/pipeline/region_estimate.h);
  // cost_after is then cost_before less the part of it the written graph's region saves.
  struct RegionEstimate {
    int nodes_before = 0, nodes_after = 0;                // that differ
    int region_nodes_before = 0, region_nodes_after = 0;  // timed: with their neighbours
    PairTiming timing;                                    // the input's region (a) against the written one's
    PairTiming share;                                     // the whole input (a) against its region (b)
    double cost_before_by_operators = 0, cost_after_by_operators = 0;  // every node priced alone
    // Whether cost_before is the input's time as the speed check measured it (else as
    // `share` timed it against its region).
    bool input_timed = false;
    // The written graph computes as the input's (no region differs): both are priced at the
    // input's time as the speed check timed it (`timing` is then empty).
    bool alike = false;
    // Without the speed check: the search's region ran measurably slower than the input's,
    // so the input was written instead (as read); the costs are then its own.
    bool input_written = false;
  };
  std::optional<RegionEstimate> region_estimate;
  struct Layouts {
    int blocked_nodes = 0, conversions = 0;
  };
  std::optional<Layouts> layouts;               // set when layouts are searched
  std::optional<SelfCheckCoverage> self_check;  // when checked; of the graph returned
  // Rules the search applied whose graph the self-check found different from the input's
  // (the graph without them was checked and returned instead), and what differed.
  std::map<std::string, int> rejected_rules;
  std::string rejection;
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
  // The optimized graph's opaque nodes by why they were left alone, then by ONNX
  // operator type, with counts.
  std::map<std::string, std::map<std::string, int>> left_alone;
  std::map<std::string, std::string> rule_forms;  // of the rules applied: "Conv2D, Relu -> Conv2D"
  // No node of the input computes with the library's operators (a model all of float16,
  // say): it is returned as it is, with no search and nothing to check.
  bool nothing_to_optimize = false;
  struct SpeedCheck {
    std::string runtime;      // RuntimeTimer::name()
    PairTiming timing;        // the input (a) against the model returned (b)
    int rewrites = 0;         // applied by the search
    int rewrites_kept = 0;    // of those, in the model returned
    int comparisons = 0;      // pairs of models timed
    bool kept_input = false;  // no rewrite made it faster: the input, as read
    // When the model returned is another graph than the search's (egraph::Alternative):
    // its `pricing`, the cost model whose extraction it is ("analytic"), or
    // kGatedMixturesMerged for the input with its mixtures of experts merged,
    // kEinsumsAsProducts for the input with its Einsums computed as matrix products.
    std::string extraction;
    bool beat_search = false;  // that graph ran measurably faster than the search's too
    // Or than another such graph timed before it, faster than the input: its `pricing`.
    std::string beat_other;
    // That graph was timed before the search's, which was not timed: the search's cost
    // model priced it measurably below the search's graph.
    bool timed_before_search = false;
    int other_extractions_timed = 0;  // the other graphs timed, kept or not
    // Once the timer's time was spent (RuntimeTimer::OutOfTime): rewrite groups dropped
    // without timing them, the e-graph's alternatives not timed, and whether the input's
    // graph is written without having been timed (`timing` is then the last model timed
    // against the input, not written).
    int groups_dropped_untimed = 0;
    int other_extractions_untimed = 0;
    bool written_untimed = false;
  };
  std::optional<SpeedCheck> speed_check;  // set when the speed was verified
  // Why the speed could not be verified where it was to be (on cpu and cuda, the target's
  // executor cannot run a node of the input): the input was then written as read.
  std::string speed_not_verified;
  // The speed check again at larger sizes of the symbolic dimensions taso-opt chose the
  // search's sizes for (src/pipeline/speed_at_sizes.h): set where the speed check kept a
  // rewritten model that keeps such a dimension symbolic.
  struct LargerSizesCheck {
    std::string sizes;  // "t=256": the dimensions moved, at the sizes timed
    PairTiming timing;  // the input (a) against the rewritten model (b), there
    // Where the first timing found the rewritten model slower, it was timed again:
    // `timing` is then the second, and this the first's ratio.
    std::optional<double> first_ratio;
    bool slower = false;    // measurably, both times: the input was written instead
    std::string not_timed;  // where nothing was timed: why
  };
  std::optional<LargerSizesCheck> larger_sizes;
  // The inputs' symbolic dimensions (one entry per dim_param, or per unnamed dimension):
  // the size the search ran at, and whether the written model keeps the dimension.
  struct SymbolicDimension {
    std::string name;  // the dim_param, or input[axis] for an unnamed dimension
    int64_t built_at = 1;
    bool given = false;               // by --input-shape
    std::string why_not_one;          // not given, and built at another size than 1: why
    bool kept = false;                // written symbolic
    std::vector<int64_t> checked_at;  // sizes the self-check ran at besides built_at
    // Kept as the sum of these dimensions (by name) and sum_plus: the input does not build
    // with it apart from them (a decoder's attention mask over past + seq tokens).
    std::vector<std::string> sum_of;
    int64_t sum_plus = 0;
    std::string why_fixed;  // when not kept
  };
  std::vector<SymbolicDimension> symbolic_dims;
  std::optional<double> symbolic_check_difference;  // max over the checks at other sizes
  // Set by the caller that writes the model (WriteCheckedModel), for the report.
  std::optional<EndToEndCheck> end_to_end;
};

// Optimizes the model's graph with `rules` (applied as given: whether they are trusted,
// proved for example, is the caller's decision). Fails before any work when the
// options are inconsistent, the graph's tensors exceed the memory limit, the self-check
// cannot cover the graph or the backend cannot be used; after it, when a stage fails or
// the self-check finds the graphs differ even without the search's rewrites (which it
// drops when they make the difference).
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
// What the import did to the model before the search (its opset converted, calls of its
// functions inlined or kept), as lines of the summary; empty when nothing.
std::string ImportText(const OnnxModel& imported, const PipelineResult& result);
// The run as JSON (taso-opt --report); `imported`, the model as read, adds what its
// import did ("import": null without it).
std::string JsonReport(const PipelineOptions& options, const PipelineResult& result,
                       const OnnxModel* imported = nullptr);
// The JSON report of a model written as read without being optimized, and why:
// {"not_optimized": REASON, "written_as_read": true}.
std::string JsonNotOptimizedReport(absl::string_view reason);

}  // namespace taso
