// taso-opt MODEL.onnx -o OUT.onnx [--target ort|cpu|cuda] [--rules FILE[,FILE...]] [--backend B]
// [--cost-cache FILE] [--alpha A] [--budget N] [--time-limit S] [--search-engine egraph|backtracking]
// [--report FILE]: optimizes an ONNX model for a target runtime with the rule databases by
// equality saturation (or cost-based backtracking search), folds weight-only subgraphs, and writes
// the result only if it computes what the input computes (self-check) and, on the ort
// target, runs measurably faster there; a model the memory available cannot hold while it
// is optimized is written as read. The work is
// taso::OptimizeModel's (taso/pipeline/pipeline.h); this file reads flags and files and writes.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "cli.h"
#include "taso/backends/available_memory.h"
#include "taso/ir/file_limits.h"
#include "taso/ir/progress.h"
#include "taso/ir/status_macros.h"
#include "taso/ir/temporary_folder.h"
#include "taso/onnx/onnx_io.h"
#include "taso/onnx/write_as_read.h"
#include "taso/pipeline/pipeline.h"
#include "taso/pipeline/written_model.h"
#include "taso/rules/rules.h"

#ifndef TASO_SOURCE_DIR
#define TASO_SOURCE_DIR "."
#endif

ABSL_FLAG(std::string, o, "", "where to write the optimized model");
// The K=3 database, the merges of linear layers that take four operators, and the
// products of joined inputs on block-diagonal weights.
ABSL_FLAG(std::string, rules,
          TASO_SOURCE_DIR "/rules/taso_k3.pb," TASO_SOURCE_DIR "/rules/gemm_merges_k4.pb," TASO_SOURCE_DIR
                          "/rules/gemm_blockdiag_k4.pb",
          "the rule databases, comma-separated; the rules of every file but the first are named "
          "\"<file stem>:<name>\" (e.g. gemm_merges_k4:r0320)");
ABSL_FLAG(std::string, target, "",
          "the runtime the written model is optimized for: ort (ONNX Runtime, CPU execution provider, level all), "
          "cpu or cuda (our executors); default: ort where Node.js and onnxruntime-node are installed, else cpu");
ABSL_FLAG(std::string, backend, "",
          "cost model (default: the target's): ort (operators measured in ONNX Runtime), cpu (oneDNN kernel times, "
          "measured), cuda (cuDNN/cuBLAS kernel times on the GPU, measured), analytic (roofline)");
ABSL_FLAG(int, ort_threads, taso::PipelineOptions().ort_threads,
          "ONNX Runtime's intra-op threads for the ort target (0: as its default session)");
ABSL_FLAG(bool, no_verify_speed, !taso::PipelineOptions().verify_speed,
          "do not time the optimized model against the input in the target runtime before writing it (ONNX Runtime "
          "on the ort target, our executor on cpu and cuda where it runs every node; on those backends the regions "
          "where it differs are still timed, and where they run measurably slower the input is written)");
ABSL_FLAG(double, verify_speed_seconds, taso::PipelineOptions().verify_speed_seconds,
          "time for the speed check's comparisons in the target runtime (ort target); once spent, the choices left "
          "are made towards the input without timing");
ABSL_FLAG(std::string, cost_cache, "",
          "the measured-cost cache file (default: ~/.cache/taso/costs.sqlite; none: no cache). The cuda backend "
          "keeps the convolution algorithms cuDNN finds in the default file whatever this names, so that every "
          "process on a GPU runs the same ones");
ABSL_FLAG(double, alpha, taso::SearchOptions().alpha, "keep graphs costing less than alpha times the best");
ABSL_FLAG(int64_t, budget, taso::SearchOptions().budget, "graphs expanded at most");
ABSL_FLAG(double, time_limit, taso::SearchOptions().time_limit,
          "search time limit in seconds (the self-check and export come after it)");
ABSL_FLAG(int64_t, max_queue, taso::SearchOptions().max_queue,
          "graphs waiting in the search queue at most (bounds memory)");
ABSL_FLAG(std::string, report, "", "also write the summary as JSON to this file");
ABSL_FLAG(double, max_memory_gb, 0,
          "refuse a model whose tensors (inputs, weights, intermediates) need more than this many GB together "
          "(0: 16, or the memory available where more; and a model whose tensors the memory available "
          "cannot hold while it is optimized is written as read)");
ABSL_FLAG(bool, progress_log, false,
          "write each stage on a line of its own on stderr, with the seconds since the start "
          "(for logs: the progress line shows only on a terminal)");
ABSL_FLAG(bool, skip_self_check, false,
          "do not run both graphs, nor the input and written files, to compare them (for very large models)");
ABSL_FLAG(bool, allow_unproved, false, "use a rules file that taso-verify has not proved (--write-proved)");
ABSL_FLAG(uint64_t, seed, taso::PipelineOptions().seed, "seed of the self-check's random inputs");
ABSL_FLAG(std::string, search, "",
          "what to search: substitutions, layouts or both (default: both on the cpu backend, substitutions on "
          "cuda and analytic, which have no layout choices)");
ABSL_FLAG(int64_t, max_model_bytes, taso::kDefaultMaxModelBytes,
          "refuse a model file larger than this many bytes (at most 2 GiB - 1: protobuf's limit)");
ABSL_FLAG(int64_t, max_rules_bytes, taso::kDefaultMaxRuleFileBytes,
          "refuse a rule database larger than this many bytes");
ABSL_FLAG(int, measure, 0,
          "time this many runs of the original and of the optimized graph with the backend's executor (cpu, or cuda "
          "with --backend cuda), in turn, on four pairs of executors made in both orders, and report the "
          "medians' geometric means");
ABSL_FLAG(std::string, search_engine, std::string(taso::SearchEngineName(taso::PipelineOptions().engine)),
          "how substitutions are searched: egraph (equality saturation then extraction, --egraph-*) or "
          "backtracking (TASO's cost-ordered search, --alpha, --budget, --time-limit)");
ABSL_FLAG(int, egraph_iterations, taso::egraph::SaturationLimits().max_iterations,
          "e-graph engine: saturation iterations at most");
ABSL_FLAG(int64_t, egraph_nodes, taso::egraph::SaturationLimits().max_enodes,
          "e-graph engine: e-nodes of saturation (the rules other than merges may add a quarter "
          "more where merges filled it; joined splits after it, as many again)");
ABSL_FLAG(double, egraph_time_limit, taso::egraph::SaturationLimits().time_limit,
          "e-graph engine: seconds for pricing the input and saturation (saturation has at least half; "
          "extraction follows, --egraph-extraction-seconds more)");
ABSL_FLAG(double, egraph_extraction_seconds, taso::egraph::ExtractionLimits().seconds,
          "e-graph engine: seconds for extraction after saturation, the analytic second opinions included");
ABSL_FLAG(int, egraph_multi_iterations, taso::egraph::RuleScheduler().multi_pattern_iterations,
          "e-graph engine: how many first iterations apply rules with several outputs (merges; 0: none)");
ABSL_FLAG(int64_t, egraph_memory_mb, taso::egraph::SaturationLimits().max_bytes >> 20,
          "e-graph engine: approximate memory of the e-graph at most, in MiB");
ABSL_FLAG(std::vector<std::string>, input_shape, {},
          "NAME=D0xD1x...: the size of an input with symbolic dimensions to search at (repeatable, or "
          "comma-separated); symbolic dimensions not given take 1. An input the file declares no shape for "
          "needs one, and is written with its rank");

namespace {

constexpr const char* kTool = "taso-opt";

// The target --target names; ort by default where it is available, else cpu (saying so).
// An explicit target that cannot run here is an error naming what is missing.
absl::StatusOr<taso::Target> TargetFromFlag() {
  const std::string name = absl::GetFlag(FLAGS_target);
  if (name.empty()) {
    const absl::Status ort = taso::CheckTargetAvailable(taso::Target::kOrt);
    if (ort.ok()) return taso::Target::kOrt;
    std::fprintf(stderr, "%s: %s; optimizing for --target cpu\n", kTool, std::string(ort.message()).c_str());
    return taso::Target::kCpu;
  }
  const std::optional<taso::Target> target = taso::ParseTarget(name);
  if (!target) return absl::InvalidArgumentError(absl::StrCat("unknown target '", name, "' (ort, cpu, cuda)"));
  return *target;
}

// The search engine and the e-graph's limits, or the usage error they make.
absl::Status EngineFromFlags(taso::PipelineOptions& options) {
  const std::string engine = absl::GetFlag(FLAGS_search_engine);
  const std::optional<taso::SearchEngine> parsed = taso::ParseSearchEngine(engine);
  if (!parsed)
    return absl::InvalidArgumentError(absl::StrCat("unknown --search-engine '", engine, "' (backtracking, egraph)"));
  options.engine = *parsed;
  taso::egraph::SaturationLimits& limits = options.egraph.limits;
  limits.max_iterations = absl::GetFlag(FLAGS_egraph_iterations);
  limits.max_enodes = absl::GetFlag(FLAGS_egraph_nodes);
  limits.time_limit = absl::GetFlag(FLAGS_egraph_time_limit);
  limits.max_bytes = absl::GetFlag(FLAGS_egraph_memory_mb) << 20;
  options.egraph.scheduler.multi_pattern_iterations = absl::GetFlag(FLAGS_egraph_multi_iterations);
  taso::egraph::ExtractionLimits& extraction = options.egraph.extraction;
  extraction.seconds = absl::GetFlag(FLAGS_egraph_extraction_seconds);
  if (!(extraction.seconds >= extraction.alternative_seconds))
    return absl::InvalidArgumentError(
        absl::StrCat("--egraph-extraction-seconds must be at least ", extraction.alternative_seconds));
  if (limits.max_iterations < 1 || limits.max_enodes < 1 || limits.max_bytes < 1 || !(limits.time_limit > 0))
    return absl::InvalidArgumentError(
        "--egraph-iterations, --egraph-nodes, --egraph-time-limit and --egraph-memory-mb must be positive");
  if (options.egraph.scheduler.multi_pattern_iterations < 0)
    return absl::InvalidArgumentError("--egraph-multi-iterations must not be negative");
  return absl::OkStatus();
}

// The pipeline's options from the flags, or the usage error they make.
absl::StatusOr<taso::PipelineOptions> OptionsFromFlags() {
  taso::PipelineOptions options;
  ASSIGN_OR_RETURN(options.target, TargetFromFlag());
  const std::string backend = absl::GetFlag(FLAGS_backend);
  const std::optional<taso::Backend> parsed_backend =
      backend.empty() ? taso::TargetBackend(options.target) : taso::ParseBackend(backend);
  if (!parsed_backend)
    return absl::InvalidArgumentError(absl::StrCat("unknown backend '", backend, "' (ort, cpu, analytic, cuda)"));
  options.backend = *parsed_backend;
  options.ort_threads = absl::GetFlag(FLAGS_ort_threads);
  if (options.ort_threads < 0) return absl::InvalidArgumentError("--ort-threads must not be negative");
  options.verify_speed = !absl::GetFlag(FLAGS_no_verify_speed);
  options.verify_speed_seconds = absl::GetFlag(FLAGS_verify_speed_seconds);
  const std::string search = absl::GetFlag(FLAGS_search);
  const std::optional<taso::SearchKind> parsed_search =
      search.empty() ? taso::DefaultSearchKind(options.backend) : taso::ParseSearchKind(search);
  if (!parsed_search)
    return absl::InvalidArgumentError(absl::StrCat("unknown --search '", search, "' (substitutions, layouts, both)"));
  options.search = *parsed_search;
  if (options.search != taso::SearchKind::kSubstitutions && options.backend != taso::Backend::kCpu)
    return absl::InvalidArgumentError(
        "layouts are searched on the cpu backend only (oneDNN's blocked layouts): use --backend cpu");
  if (!(absl::GetFlag(FLAGS_alpha) >= 1.0)) return absl::InvalidArgumentError("--alpha must be at least 1");
  if (absl::GetFlag(FLAGS_budget) < 0 || !(absl::GetFlag(FLAGS_time_limit) >= 0))
    return absl::InvalidArgumentError("--budget and --time-limit must not be negative");
  options.cost_cache = absl::GetFlag(FLAGS_cost_cache);
  options.search_options.alpha = absl::GetFlag(FLAGS_alpha);
  options.search_options.budget = absl::GetFlag(FLAGS_budget);
  options.search_options.time_limit = absl::GetFlag(FLAGS_time_limit);
  options.search_options.max_queue = std::max<int64_t>(1, absl::GetFlag(FLAGS_max_queue));
  options.self_check = !absl::GetFlag(FLAGS_skip_self_check);
  options.seed = absl::GetFlag(FLAGS_seed);
  options.measure_runs = std::max(0, absl::GetFlag(FLAGS_measure));
  RETURN_IF_ERROR(EngineFromFlags(options));
  RETURN_IF_ERROR(taso::ValidateFileLimit(absl::GetFlag(FLAGS_max_model_bytes), "--max-model-bytes"));
  RETURN_IF_ERROR(taso::ValidateFileLimit(absl::GetFlag(FLAGS_max_rules_bytes), "--max-rules-bytes"));
  const double max_memory_gb = absl::GetFlag(FLAGS_max_memory_gb);
  if (!(max_memory_gb >= 0 && max_memory_gb < 9e9))
    return absl::InvalidArgumentError("--max-memory-gb must be positive (or 0 for the machine's)");
  options.max_memory_bytes = max_memory_gb > 0 ? static_cast<int64_t>(max_memory_gb * 1e9)
                                               : taso::MachineMemoryLimit(taso::AvailableMemoryBytes());
  return options;
}

// The files --rules names, or the usage error it makes.
absl::StatusOr<std::vector<std::string>> RuleFilesFromFlag() {
  std::vector<std::string> files = absl::StrSplit(absl::GetFlag(FLAGS_rules), ',', absl::SkipEmpty());
  if (files.empty()) return absl::InvalidArgumentError("--rules names no file");
  return files;
}

// The pipeline's stages and the search's advance, on the progress line.
void ShowProgress(taso::ProgressLine& line, taso::PipelineOptions& options) {
  if (!line.on()) return;
  options.on_stage = [&line](absl::string_view stage, absl::string_view detail) { line.Start(stage, detail); };
  options.search_options.progress = [&line](int64_t expansions, double best) {
    line.Update(absl::StrFormat("%d graphs expanded, best cost %.4f ms", expansions, best * 1e3));
  };
}

absl::Status WriteReport(const std::string& path, const std::string& json) {
  std::ofstream f(path);
  f << json;
  f.close();
  if (!f) {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
    return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "'"));
  }
  return absl::OkStatus();
}

// For each term of a dimension kept as a sum (past in total = seq + past), `other` with
// that term at 0 and the sum at the other terms': a decoder's first step, its key/value
// cache empty.
std::vector<std::map<std::string, int64_t>> EmptyTermSizes(
    const std::vector<taso::PipelineResult::SymbolicDimension>& dims, const std::map<std::string, int64_t>& other) {
  std::vector<std::map<std::string, int64_t>> empty;
  for (const taso::PipelineResult::SymbolicDimension& d : dims) {
    const bool all_sized =
        std::all_of(d.sum_of.begin(), d.sum_of.end(), [&](const std::string& t) { return other.contains(t); });
    if (!other.contains(d.name) || !all_sized) continue;
    for (const std::string& zero : d.sum_of) {
      std::map<std::string, int64_t> sizes = other;
      sizes[zero] = 0;
      sizes[d.name] = d.sum_plus;
      for (const std::string& t : d.sum_of) sizes[d.name] += sizes[t];
      empty.push_back(std::move(sizes));
    }
  }
  return empty;
}

taso::WriteRequest WriteRequestFor(const std::string& input_path, const taso::OnnxModel& input,
                                   const taso::PipelineResult& result, const taso::ImportOptions& import_options,
                                   const taso::PipelineOptions& options, const std::string& out) {
  taso::WriteRequest request;
  request.input_path = input_path;
  request.input = &input;
  request.output = &result.model;
  request.destination = out;
  request.target = options.target;
  request.seed = options.seed;
  request.ort_threads = options.ort_threads;
  request.import_options = import_options;
  request.ort_runner = TASO_SOURCE_DIR "/tools/ort/ort_run.js";
  request.run_end_to_end = options.self_check;
  for (const taso::PipelineResult::SymbolicDimension& d : result.symbolic_dims)
    if (d.kept && !d.checked_at.empty()) request.other_sizes[d.name] = d.checked_at.front();
  request.empty_sizes = EmptyTermSizes(result.symbolic_dims, request.other_sizes);
  return request;
}

// The last line of a run: the file written, and its data file where it has one.
void PrintWrote(const std::string& out, bool data_file) {
  if (data_file)
    std::printf("wrote %s (its weights in %s)\n", out.c_str(), taso::ExternalDataPath(out).c_str());
  else
    std::printf("wrote %s\n", out.c_str());
}

// Why the model read from `path` cannot be optimized for `target` in the memory
// `available` before it was read, where it cannot (TooLittleMemoryToOptimize); nullopt
// where it can, where --max-memory-gb says how much it may take, or where its tensors
// cannot be sized (the import then says why).
std::optional<std::string> ShortOfMemory(const onnx::ModelProto& model, const std::string& path, taso::Target target,
                                         std::optional<int64_t> available) {
  if (absl::GetFlag(FLAGS_max_memory_gb) > 0) return std::nullopt;
  const absl::StatusOr<taso::StoredTensorBytes> stored = taso::StoredModelBytes(model, taso::ModelDirectory(path));
  if (!stored.ok()) return std::nullopt;
  std::optional<std::string> reason = taso::TooLittleMemoryToOptimize(*stored, target, available);
  if (reason)
    absl::StrAppend(&*reason, " (--max-memory-gb ", std::ceil(taso::MemoryToOptimize(*stored, target) * 1e-9),
                    " tries anyway)");
  return reason;
}

// The model read from `in` written to `out` as it is (WriteAsRead), with the report, where
// there is too little memory to optimize it; the exit code.
int WriteInputAsRead(onnx::ModelProto model, const std::string& in, const std::string& out, const std::string& reason,
                     taso::ProgressLine& progress) {
  const std::string report = absl::GetFlag(FLAGS_report);
  if (!report.empty())
    if (auto s = WriteReport(report, taso::JsonNotOptimizedReport(reason)); !s.ok()) return taso::cli::Fail(kTool, s);
  progress.Start("export", out);
  const absl::StatusOr<bool> data_file = taso::WriteAsRead(std::move(model), taso::ModelDirectory(in), out);
  progress.Clear();
  if (!data_file.ok()) {
    std::error_code ignored;
    if (!report.empty()) std::filesystem::remove(report, ignored);
    return taso::cli::Fail(kTool, data_file.status());
  }
  std::printf("%s: not optimized: %s; the input is written as read\n", in.c_str(), reason.c_str());
  PrintWrote(out, *data_file);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  auto args = taso::cli::Init(argc, argv,
                              "taso-opt MODEL.onnx -o OUT.onnx [--target ort|cpu|cuda] [--rules FILE[,FILE...]] "
                              "[--backend B] [--cost-cache FILE] [--alpha A] [--budget N] [--time-limit S] "
                              "[--report FILE]");
  if (args.size() != 1) return taso::cli::Usage(kTool, "expected one ONNX model");
  const std::string out = absl::GetFlag(FLAGS_o);
  if (out.empty()) return taso::cli::Usage(kTool, "give the output file with -o");
  if (const absl::Status s = taso::cli::CheckWritable(out, "model"); !s.ok()) return taso::cli::Fail(kTool, s);
  if (const std::string report = absl::GetFlag(FLAGS_report); !report.empty())
    if (const absl::Status s = taso::cli::CheckWritable(report, "report"); !s.ok()) return taso::cli::Fail(kTool, s);
  absl::StatusOr<taso::PipelineOptions> options = OptionsFromFlags();
  if (!options.ok()) return taso::cli::Usage(kTool, std::string(options.status().message()));
  // ONNX Runtime's costs and timer write the models they time there: known now, not after
  // the search.
  if (options->target == taso::Target::kOrt || options->backend == taso::Backend::kOrt)
    if (const auto temporary = taso::TemporaryFolder::MakeInTemp("taso-opt-"); !temporary.ok())
      return taso::cli::Fail(kTool, temporary.status());
  const auto rule_files = RuleFilesFromFlag();
  if (!rule_files.ok()) return taso::cli::Usage(kTool, std::string(rule_files.status().message()));

  const auto input_shapes = taso::cli::ParseInputShapes(absl::GetFlag(FLAGS_input_shape));
  if (!input_shapes.ok()) return taso::cli::Usage(kTool, std::string(input_shapes.status().message()));
  const absl::Status model_size =
      taso::CheckFileSize(args[0], absl::GetFlag(FLAGS_max_model_bytes), "model", "--max-model-bytes");
  if (!model_size.ok()) return taso::cli::Fail(kTool, model_size);
  taso::ProgressLine progress =
      absl::GetFlag(FLAGS_progress_log) ? taso::ProgressLine::AsLog(stderr) : taso::ProgressLine::OnStderr();
  auto fail = [&progress](const absl::Status& s) {
    progress.Clear();
    return taso::cli::Fail(kTool, s);
  };
  progress.Start("import", args[0]);
  taso::ImportOptions import_options;
  import_options.fold_shape_arithmetic = true;
  import_options.max_memory_bytes = options->max_memory_bytes;
  import_options.input_shapes = *input_shapes;
  const std::optional<int64_t> available = taso::AvailableMemoryBytes();  // the model read is not counted
  absl::StatusOr<onnx::ModelProto> read = taso::ReadModelFile(args[0]);
  if (!read.ok()) return fail(read.status());
  if (absl::Status spared = taso::CheckOutputSparesInputData(*read, args[0], out); !spared.ok()) return fail(spared);
  if (const std::optional<std::string> short_of = ShortOfMemory(*read, args[0], options->target, available))
    return WriteInputAsRead(*std::move(read), args[0], out, *short_of, progress);
  const auto model = taso::ImportModelRead(*std::move(read), args[0], import_options);
  if (!model.ok()) return fail(model.status());
  const auto rules = taso::ReadRuleDatabases(*rule_files, {.max_bytes = absl::GetFlag(FLAGS_max_rules_bytes),
                                                           .allow_unproved = absl::GetFlag(FLAGS_allow_unproved)});
  if (!rules.ok()) return fail(rules.status());
  ShowProgress(progress, *options);
  auto result = taso::OptimizeModel(*model, *rules, *options);
  if (!result.ok()) return fail(result.status());

  // The model is written and checked where it is staged, the report written, then the
  // model moved into place: a failure at any step leaves no model behind, and no report
  // once the model cannot be moved.
  progress.Start("export", out);
  auto staged = taso::StageCheckedModel(WriteRequestFor(args[0], *model, *result, import_options, *options, out));
  if (!staged.ok()) return fail(staged.status());
  result->end_to_end = staged->checks().end_to_end;
  const std::string report = absl::GetFlag(FLAGS_report);
  if (!report.empty())
    if (auto s = WriteReport(report, taso::JsonReport(*options, *result, &*model)); !s.ok()) return fail(s);
  if (auto s = staged->MoveIntoPlace(); !s.ok()) {
    std::error_code ignored;
    if (!report.empty()) std::filesystem::remove(report, ignored);
    return fail(s);
  }
  progress.Clear();
  std::fputs(taso::SummaryText(*options, *result, args[0]).c_str(), stdout);
  std::fputs(taso::ImportText(*model, *result).c_str(), stdout);
  std::printf("export: %s\n", staged->checks().validation.c_str());
  PrintWrote(out, staged->external_data());
  return 0;
}
