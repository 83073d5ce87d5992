// How a written model is validated: by the installed ONNX checker where it knows the
// opset (ExportOnnx ran it), else by ONNX Runtime: tools/ort/ort_run.js loads the file,
// runs it on random inputs and compares its outputs with the reference executor's
// outputs of the same graph (where the reference kernels can run it).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "taso/ir/executor.h"
#include "taso/ir/rng.h"
#include "taso/ir/status_macros.h"
#include "taso/pipeline/pipeline.h"

extern char** environ;

namespace taso {

namespace {

// Tensors in ort_run.js's format: DIR/manifest.json and one float32 file each.
absl::Status WriteTensors(const std::filesystem::path& dir, const TensorMap& tensors) {
  std::filesystem::create_directories(dir);
  std::vector<std::string> entries;
  for (const auto& [name, t] : tensors) {
    const std::string file = absl::StrCat("t", entries.size(), ".bin");
    std::ofstream f(dir / file, std::ios::binary);
    f.write(reinterpret_cast<const char*>(t.data.data()), static_cast<std::streamsize>(t.data.size() * 4));
    if (!f) return absl::InternalError(absl::StrCat("cannot write ", (dir / file).string()));
    entries.push_back(absl::StrFormat("{\"name\": \"%s\", \"shape\": [%s], \"file\": \"%s\"}", absl::CEscape(name),
                                      absl::StrJoin(t.shape, ", "), file));
  }
  std::ofstream manifest(dir / "manifest.json");
  manifest << "[" << absl::StrJoin(entries, ",\n") << "]\n";
  return manifest ? absl::OkStatus() : absl::InternalError("cannot write the manifest of the check's tensors");
}

// Runs `args` (args[0] found on PATH) with its output to `log`; the exit status, or -1
// when it cannot be started.
int RunLogged(const std::vector<std::string>& args, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  if (spawned != 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// Inputs for the validation run, as float32 values ort_run.js feeds as each input's type.
struct ValidationFeeds {
  TensorMap inputs;
  bool float32_only = true;  // every fed input is float32: the reference executor runs them
  std::string unfed;         // an input of a type ort_run.js cannot feed, if any
};

// RandomInputs' for float32 inputs; in [-1, 1] for other floating-point types; 0 to 3 for
// integers (token ids, indices: valid for any table of 4 rows); 0 or 1 for booleans. An
// initializer listed as an input keeps its own value (ONNX Runtime uses it unfed).
ValidationFeeds ValidationInputs(const Graph& graph) {
  using onnx::TensorProto;
  ValidationFeeds feeds{RandomInputs(graph, 5)};
  Rng rng(6);
  for (ValueId id : graph.inputs()) {
    const Value& v = graph.value(id);
    if (v.dtype == DataType::kFloat32 || v.is_weight()) continue;
    const int type = static_cast<int>(v.dtype);
    const bool floating = type == TensorProto::FLOAT16 || type == TensorProto::DOUBLE;
    const bool integer = (type >= TensorProto::UINT8 && type <= TensorProto::INT64) || type == TensorProto::UINT32 ||
                         type == TensorProto::UINT64 || type == TensorProto::BOOL;
    if (!floating && !integer) {
      feeds.unfed = absl::StrCat("input '", v.name, "' is ", DataTypeName(v.dtype), ", which ort_run.js cannot feed");
      continue;
    }
    const double top = type == TensorProto::BOOL ? 2 : 4;
    Tensor<float> t(v.shape);
    for (float& x : t.data) x = floating ? static_cast<float>(rng.Uniform(-1, 1)) : std::floor(rng.Uniform(0, top));
    feeds.inputs[v.name] = std::move(t);
    feeds.float32_only = false;
  }
  return feeds;
}

std::string FirstLine(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

}  // namespace

absl::StatusOr<std::string> ValidateWrittenModel(const OnnxModel& model, const std::string& path,
                                                 const std::string& ort_runner) {
  if (OnnxInferenceChecks(model))
    return absl::StrFormat("checked by the ONNX checker and shape inference (opset %d)", model.opset);
  if (OnnxCheckerCovers(model.opset))
    return absl::StrFormat(
        "checked by the ONNX checker (opset %d); not by ONNX's shape inference, which mishandles a node of it",
        model.opset);
  const std::filesystem::path dir = path + ".check";
  std::filesystem::remove_all(dir);
  const std::string beyond =
      absl::StrFormat("opset %d is beyond the installed ONNX checker (%d)", model.opset, kMaxCheckedOpset);
  const ValidationFeeds feeds = ValidationInputs(model.graph);
  if (!feeds.unfed.empty()) return absl::StrCat(beyond, ", and ", feeds.unfed, ": NOT validated");
  RETURN_IF_ERROR(WriteTensors(dir / "inputs", feeds.inputs));
  std::vector<std::string> args = {"node", ort_runner, path, "--inputs", (dir / "inputs").string()};
  const absl::StatusOr<TensorMap> expected = feeds.float32_only ? RunReference(model.graph, feeds.inputs)
                                                                : absl::UnavailableError("inputs other than float32");
  if (expected.ok()) {
    RETURN_IF_ERROR(WriteTensors(dir / "expected", *expected));
    args.insert(args.end(), {"--compare", (dir / "expected").string()});
  }
  const std::string log = (dir / "log").string();
  const int status = RunLogged(args, log);
  const std::string said = FirstLine(log);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  if (status < 0 || said.find("not installed") != std::string::npos)
    return absl::StrCat(beyond, ", and ONNX Runtime (node ", ort_runner, ") is not available: NOT validated");
  if (status != 0) return absl::InternalError(absl::StrCat(beyond, "; ONNX Runtime refuses the written model: ", said));
  return absl::StrCat(beyond, ": validated by ONNX Runtime, which loaded and ran it",
                      expected.ok() ? " with the reference executor's outputs" : "");
}

}  // namespace taso
