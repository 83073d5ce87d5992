#include "taso/pipeline/written_model.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pipeline/output_checks.h"
#include "taso/backends/kernel_executor.h"
#include "taso/backends/ort_timer.h"
#include "taso/backends/ort_worker.h"
#include "taso/ir/output_agreement.h"
#include "taso/ir/status_macros.h"
#include "taso/onnx/onnx_io.h"
#include "taso/onnx/onnx_static_copy.h"

namespace taso {

namespace {

namespace fs = std::filesystem;

// A model's outputs by name, run on inputs drawn at `scale` at the input sizes named by
// `sizes` ("" for the sizes the input model was built at).
struct Run {
  double scale = 1;
  std::string sizes;
  TensorMap outputs;
};
using Runs = std::vector<Run>;

// Input sizes to run at: their label (Run::sizes) and each input's shape.
struct InputSizes {
  std::string label;
  std::map<std::string, Shape> shapes;
};

std::string ShapesJson(const std::map<std::string, Shape>& shapes) {
  std::vector<std::string> entries;
  for (const auto& [name, shape] : shapes)
    entries.push_back(absl::StrCat(JsonQuote(name), ": [", absl::StrJoin(shape, ", "), "]"));
  return absl::StrCat("{", absl::StrJoin(entries, ", "), "}");
}

// The input model's inputs at the sizes it was built at, by name; not the initializers
// also listed as inputs (their shapes are fixed, and an import takes no size for them).
std::map<std::string, Shape> BuiltShapes(const Graph& graph) {
  std::map<std::string, Shape> shapes;
  for (ValueId id : graph.inputs())
    if (const Value& v = graph.value(id); v.shape_known && !v.is_weight()) shapes[v.name] = v.shape;
  return shapes;
}

// The sizes the input was built at, with the symbolic dimensions named in `sizes` at
// those sizes instead, labelled by them.
InputSizes AtSizes(const WriteRequest& r, const std::map<std::string, int64_t>& sizes) {
  InputSizes at{"", BuiltShapes(r.input->graph)};
  std::map<std::string, int64_t> named;
  for (const SymbolicDim& d : r.input->symbolic_dims)
    if (auto it = sizes.find(d.Key()); it != sizes.end() && at.shapes.contains(d.input)) {
      at.shapes[d.input][d.axis] = it->second;
      named[d.Key()] = it->second;
    }
  at.label = absl::StrJoin(named, ", ", absl::PairFormatter("="));
  return at;
}

// The sizes the input was built at; then, where the written file keeps symbolic
// dimensions, those dimensions at their other sizes.
std::vector<InputSizes> SizesToRun(const WriteRequest& r) {
  if (r.other_sizes.empty()) return {AtSizes(r, {})};
  return {AtSizes(r, {}), AtSizes(r, r.other_sizes)};
}

absl::StatusOr<Tensor<float>> ReadFloats(const std::string& path, const std::vector<double>& dims) {
  Shape shape;
  for (double d : dims) shape.push_back(static_cast<int64_t>(d));
  Tensor<float> t(shape);
  std::ifstream f(path, std::ios::binary);
  f.read(reinterpret_cast<char*>(t.data.data()), static_cast<std::streamsize>(t.data.size() * sizeof(float)));
  if (!f || f.peek() != std::char_traits<char>::eof())
    return absl::InternalError(absl::StrCat("ONNX Runtime's output file ", path, " is not of its shape"));
  return t;
}

// The model at `path` run by ONNX Runtime at `sizes`, at each input scale (the worker's
// "outputs" request), its outputs read from `dir`.
absl::StatusOr<Runs> RunInOrt(OrtWorker& worker, const std::string& path, const InputSizes& sizes,
                              const WriteRequest& r, const std::string& dir) {
  fs::create_directories(dir);
  const std::string request =
      absl::StrCat("{\"op\": \"outputs\", \"model\": ", JsonQuote(path), ", \"shapes\": ", ShapesJson(sizes.shapes),
                   ", \"scales\": [", absl::StrJoin(kInputScales, ", "), "], \"seed\": ", r.seed % 4294967296u,
                   ", \"dir\": ", JsonQuote(dir), ", \"threads\": ", r.ort_threads, "}");
  ASSIGN_OR_RETURN(const std::string reply, worker.Request(request));
  ASSIGN_OR_RETURN(const double outputs, JsonNumber(reply, "outputs"));
  Runs runs;
  for (double scale : kInputScales) runs.push_back(Run{scale, sizes.label, {}});
  for (int i = 0; i < static_cast<int>(outputs); ++i) {
    ASSIGN_OR_RETURN(const std::string name, JsonString(reply, absl::StrCat("name_", i)));
    ASSIGN_OR_RETURN(const std::vector<double> dims, JsonNumbers(reply, absl::StrCat("shape_", i)));
    for (size_t j = 0; j < runs.size(); ++j) {
      ASSIGN_OR_RETURN(runs[j].outputs[name], ReadFloats(absl::StrCat(dir, "/s", j, "_o", i, ".bin"), dims));
    }
  }
  return runs;
}

// The model at `path` run by ONNX Runtime at each of `sizes`.
absl::StatusOr<Runs> RunInOrt(OrtWorker& worker, const std::string& path, const std::vector<InputSizes>& sizes,
                              const WriteRequest& r, const std::string& dir) {
  Runs runs;
  for (size_t k = 0; k < sizes.size(); ++k) {
    absl::StatusOr<Runs> at_sizes = RunInOrt(worker, path, sizes[k], r, absl::StrCat(dir, "/", k));
    if (!at_sizes.ok() && !sizes[k].label.empty())
      return absl::Status(at_sizes.status().code(),
                          absl::StrCat("at ", sizes[k].label, ": ", at_sizes.status().message()));
    if (!at_sizes.ok()) return at_sizes.status();
    for (Run& run : *at_sizes) runs.push_back(std::move(run));
  }
  return runs;
}

// The model run by the target's executor at each input scale, its shape arithmetic
// folded at its sizes (RunnableAtItsSizes); fails on a node outside the library left even
// so, which no executor runs.
absl::StatusOr<Runs> RunOnExecutor(Backend backend, const OnnxModel& model, const ImportOptions& options,
                                   uint64_t seed) {
  ASSIGN_OR_RETURN(const Graph graph, RunnableAtItsSizes(model, options));
  Runs runs;
  for (double scale : kInputScales) {
    ASSIGN_OR_RETURN(std::unique_ptr<KernelExecutor> executor, MakeKernelExecutor(BackendName(backend), graph));
    ASSIGN_OR_RETURN(TensorMap outputs, executor->Run(RandomInputs(graph, seed, scale)));
    runs.push_back(Run{scale, "", std::move(outputs)});
  }
  return runs;
}

// Both files run in the target's runtime: `expected` the input file's runs, `got` the
// written one's; `expected` failing means the input cannot be run there. `empty_sizes`:
// the labels of the sizes with a dimension at 0 among them.
struct BothRuns {
  std::string runtime;
  absl::StatusOr<Runs> expected, got;
  std::vector<std::string> empty_sizes;
};

// Both files run at each of r.empty_sizes where the input file runs (an exporter's graph
// may not run with an empty dimension, which is then no size its users run at), their
// runs added to `both`'s; the written file failing where the input runs fails `both.got`.
void RunBothAtEmptySizes(OrtWorker& worker, const WriteRequest& r, const std::string& written,
                         const std::string& scratch, BothRuns& both) {
  for (size_t k = 0; k < r.empty_sizes.size() && both.expected.ok() && both.got.ok(); ++k) {
    const InputSizes sizes = AtSizes(r, r.empty_sizes[k]);
    const std::string dir = absl::StrCat(scratch, "/empty", k);
    absl::StatusOr<Runs> expected = RunInOrt(worker, r.input_path, std::vector<InputSizes>{sizes}, r, dir + "/input");
    if (!expected.ok()) continue;
    absl::StatusOr<Runs> got = RunInOrt(worker, written, std::vector<InputSizes>{sizes}, r, dir + "/written");
    if (!got.ok()) {
      both.got = got.status();
      return;
    }
    std::move(expected->begin(), expected->end(), std::back_inserter(*both.expected));
    std::move(got->begin(), got->end(), std::back_inserter(*both.got));
    both.empty_sizes.push_back(sizes.label);
  }
}

absl::StatusOr<BothRuns> RunBoth(const WriteRequest& r, const std::string& written, const std::string& scratch) {
  if (r.target == Target::kOrt) {
    const int64_t session_bytes = std::max(SessionBytes(r.input->graph), SessionBytes(r.output->graph));
    ASSIGN_OR_RETURN(std::unique_ptr<OrtWorker> worker, OrtWorker::Start(WorkerForSessions(session_bytes)));
    const std::string runtime = absl::StrCat("ONNX Runtime ", worker->version(), " (CPU, level all)");
    // Read with taso-opt's own memory already taken.
    const std::optional<int64_t> available = r.available_memory ? r.available_memory() : std::nullopt;
    if (const std::string no_room = NoRoomForSession(session_bytes, available); !no_room.empty())
      return BothRuns{runtime, absl::ResourceExhaustedError(no_room), absl::ResourceExhaustedError(no_room)};
    const std::vector<InputSizes> sizes = SizesToRun(r);
    BothRuns both{runtime, RunInOrt(*worker, r.input_path, sizes, r, scratch + "/input"),
                  RunInOrt(*worker, written, sizes, r, scratch + "/written")};
    RunBothAtEmptySizes(*worker, r, written, scratch, both);
    return both;
  }
  const Backend backend = TargetBackend(r.target);
  ImportOptions options = r.import_options;
  for (const auto& [name, shape] : BuiltShapes(r.input->graph)) options.input_shapes[name] = shape;
  options.shared_weights = &r.input->graph;
  BothRuns both{absl::StrCat("our ", BackendName(backend), " executor"),
                RunOnExecutor(backend, *r.input, r.import_options, r.seed), absl::InternalError("")};
  const absl::StatusOr<OnnxModel> read_back = ImportOnnxFile(written, options);
  both.got = read_back.ok() ? RunOnExecutor(backend, *read_back, r.import_options, r.seed) : read_back.status();
  return both;
}

absl::StatusOr<EndToEndCheck> CheckEndToEnd(const WriteRequest& r, const std::string& written,
                                            const std::string& scratch) {
  ASSIGN_OR_RETURN(const BothRuns both, RunBoth(r, written, scratch));
  EndToEndCheck check;
  check.runtime = both.runtime;
  if (absl::IsResourceExhausted(both.expected.status())) {
    check.not_run = absl::StrCat("too little memory here to run the files in ", both.runtime, ": ",
                                 both.expected.status().message());
    return check;
  }
  if (!both.expected.ok()) {
    check.not_run = absl::StrCat(both.runtime, " cannot run the input file: ", both.expected.status().message());
    return check;
  }
  if (!both.got.ok())
    return absl::InternalError(absl::StrCat(
        both.runtime, " cannot run the model written, so it was not written: ", both.got.status().message()));
  OutputAgreement agreement;
  for (size_t k = 0; k < both.expected->size(); ++k) {
    const Run& expected = (*both.expected)[k];
    OutputAgreement run = CompareOutputs(expected.outputs, (*both.got)[k].outputs, expected.scale);
    run.worst = absl::StrCat("output '", run.worst, "'", expected.sizes.empty() ? "" : " at ", expected.sizes);
    agreement.Merge(run);
  }
  if (!r.other_sizes.empty()) check.other_sizes = AtSizes(r, r.other_sizes).label;
  check.empty_sizes = absl::StrJoin(both.empty_sizes, "; ");
  if (!agreement.Agrees())
    return absl::InternalError(absl::StrCat(
        "in ", both.runtime, " the model written gives other outputs than the input file: ", agreement.Describe(),
        "; it was not written"));
  check.input_scales.assign(std::begin(kInputScales), std::end(kInputScales));
  check.outputs = static_cast<int>(both.expected->front().outputs.size());
  check.max_difference = agreement.max_abs;
  check.worst = agreement.worst;
  check.worst_input_scale = agreement.input_scale;
  check.worst_relative = agreement.relative;
  return check;
}

// The error of a model the export could not write: where the input file fails the strict
// shape inference the export runs on what it writes, that first (no model written from it
// could pass it), then the export's own.
absl::Status ExportError(const WriteRequest& r, absl::Status exported) {
  if (r.input_path.empty()) return exported;
  absl::StatusOr<onnx::ModelProto> input = ReadModelFile(r.input_path);
  if (!input.ok()) return exported;
  const absl::Status as_read =
      InferShapesAsExportDoes(*std::move(input), absl::StrCat("the input '", r.input_path, "'"));
  if (as_read.ok()) return exported;
  return absl::InvalidArgumentError(
      absl::StrCat(as_read.message(), " (the export's own error: ", exported.message(), ")"));
}

}  // namespace

StagedModel::StagedModel(TemporaryFolder folder, std::string staged, const WriteRequest& r)
    : folder_(std::move(folder)), staged_(std::move(staged)), destination_(r.destination) {}

absl::Status StagedModel::MoveIntoPlace() { return MoveModelIntoPlace(staged_, destination_, external_data_); }

absl::StatusOr<StagedModel> StageCheckedModel(const WriteRequest& r) {
  ASSIGN_OR_RETURN(TemporaryFolder folder, MakeStagingFolder(r.destination));
  const std::string folder_path = folder.path();
  StagedModel staged(std::move(folder), (fs::path(folder_path) / fs::path(r.destination).filename()).string(), r);
  if (absl::Status exported =
          r.writer ? r.writer(*r.output, staged.staged_) : ExportOnnxFile(*r.output, staged.staged_);
      !exported.ok())
    return ExportError(r, std::move(exported));
  // The staging folder is the model's own, so a data file there is the one just written.
  staged.external_data_ = fs::exists(ExternalDataPath(staged.staged_));
  ASSIGN_OR_RETURN(staged.checks_.validation, ValidateWrittenModel(*r.output, staged.staged_, r.ort_runner));
  if (r.run_end_to_end) {
    ASSIGN_OR_RETURN(staged.checks_.end_to_end, CheckEndToEnd(r, staged.staged_, folder_path + "/runs"));
  } else {
    staged.checks_.end_to_end.not_run = "skipped with the self-check (--skip-self-check)";
  }
  return staged;
}

}  // namespace taso
