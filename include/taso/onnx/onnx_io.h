// ONNX import and export (opsets 11 to 26; 7 to 10 converted to 11).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "onnx/onnx_pb.h"
#include "taso/ir/graph.h"
#include "taso/ir/memory_limit.h"
#include "taso/ir/onnx_node.h"
#include "taso/ir/temporary_folder.h"
#include "taso/onnx/onnx_inline_functions.h"

namespace taso {

class SharedWeightsFile;

// A symbolic dimension of a graph input (ONNX dim_param, or a dimension with neither a
// value nor a name), and the size the imported graph has for it.
struct SymbolicDim {
  std::string param;  // the dim_param; empty for an unnamed dimension
  std::string input;  // the graph input it belongs to
  int axis = 0;
  int64_t value = 1;   // the size the graph is built at
  bool given = false;  // by ImportOptions::input_shapes, else 1
  // Where not given and not 1: why not (what fails to build with it at 1); the other
  // sizes it is checked at are then multiples of `value`.
  std::string why_not_one;
  // Dimensions sharing a key are one variable: the param, or input[axis] when unnamed.
  std::string Key() const;
};

// How each dimension of a value is written: nullopt at the graph's size, "" as a dynamic
// dimension without a name, otherwise as that dim_param.
using DimNames = std::vector<std::optional<std::string>>;

// A shape the file declares for a value (value_info, a graph output) that what its inputs
// give contradicts (src/onnx/onnx_stale_declarations.h).
struct StaleDeclaration {
  std::string name;
  Shape declared;
  Shape computed;
  bool graph_output = false;
};

// A model: the graph plus everything of the ONNX file that is not the graph's computation
// (IR version, opset imports, producer, metadata, functions, ...), kept to be written back.
struct OnnxModel {
  Graph graph;
  std::shared_ptr<const onnx::ModelProto> shell;  // the model without nodes and tensors
  int opset = kBuiltModelOpset;                   // of the default ONNX domain
  // The inputs' symbolic dimensions, each built at a concrete size; empty for a model of
  // static shapes. `source` is then the model as read, to build it at other sizes.
  std::vector<SymbolicDim> symbolic_dims;
  std::shared_ptr<const onnx::ModelProto> source;
  // Values (inputs, outputs, intermediates) written with symbolic dimensions, by name;
  // every other value is written at its size in the graph. Import leaves it empty (a model
  // is written at the sizes it was built at); the pipeline sets what it has checked.
  absl::flat_hash_map<std::string, DimNames> symbolic_shapes;
  // The weights were read from external data files in this directory; ExportOnnxFile
  // writes them so too.
  bool external_data = false;
  std::string external_data_dir;
  // The file's opset where import converted it to kMinOpset first (an older one); else 0.
  int converted_from_opset = 0;
  // The calls of model-local functions import replaced by their bodies, and those kept.
  InlinedFunctions inlined_functions;
  // The file's sparse initializers, by name, which import made dense (and which are
  // written dense).
  std::vector<std::string> sparse_made_dense;
  // The file's declarations import left out (value_info) or wrote as computed (graph
  // outputs), as stale.
  std::vector<StaleDeclaration> stale_declarations;
  // The run-time inputs the file declares no shape for (not even a rank), which were
  // built at the shapes ImportOptions::input_shapes gave; they are written with that rank.
  std::vector<std::string> shapeless_inputs;
};

struct ImportOptions {
  // Shape arithmetic on static shapes (Shape -> Gather -> Div -> ..., as PyTorch exports
  // compute slice bounds) becomes Constant nodes, so what reads it is a library operator
  // rather than opaque. Off by default: an import then writes back exactly what it read.
  bool fold_shape_arithmetic = false;
  // The most memory the model's declared tensors (inputs, initializers, and what the
  // nodes compute from them) may need together; a model needing more is refused before
  // its tensors are read.
  int64_t max_memory_bytes = kDefaultMaxMemoryBytes;
  // Sizes for inputs with symbolic dimensions, by input name (the whole shape; its fixed
  // dimensions must agree). Symbolic dimensions of inputs not named here are taken as 1.
  absl::flat_hash_map<std::string, Shape> input_shapes;
  // Where tensors stored as external data are read from (relative paths, inside this
  // directory only); ImportOnnxFile sets the model's directory.
  std::string external_data_dir;
  // A graph whose weights an initializer of the same name and values shares rather than
  // being read again (a model imported again at other sizes); may be null. The values are
  // compared, so a name that holds another tensor there is read as usual.
  const Graph* shared_weights = nullptr;
  // The model was written from `shared_weights`' graph without its weights
  // (ExportOnnxWithoutWeights): an initializer that holds no values is that graph's weight
  // of its name, type and shape. Off, such an initializer is refused as any file's is.
  bool weights_left_out = false;
  // Whether a model with symbolic dimensions keeps a copy of itself as `source`. Imports
  // at other sizes, which are never built again, leave it out, and ImportOnnxFile keeps the
  // model it read instead of a copy: those copies of every weight took 12% of a Wide
  // ResNet-50-2's run and 220 MB of its peak memory.
  bool keep_source = true;
};

absl::StatusOr<OnnxModel> ImportOnnx(const onnx::ModelProto& model, const ImportOptions& options = {});
absl::StatusOr<OnnxModel> ImportOnnxFile(const std::string& path, const ImportOptions& options = {});
// ImportOnnxFile's import of `model`, which ReadModelFile read from `path`.
absl::StatusOr<OnnxModel> ImportModelRead(onnx::ModelProto model, const std::string& path,
                                          const ImportOptions& options = {});
// The directory of a model file, where its external data is looked for ("." for a bare
// file name).
std::string ModelDirectory(const std::string& path);

// Builds the ModelProto; fails if it does not pass the ONNX checker and strict shape
// inference. At opsets the installed checker does not know (OnnxCheckerCovers false)
// only the graph's own consistency is checked: validating such a model is the caller's.
absl::StatusOr<onnx::ModelProto> ExportOnnx(const OnnxModel& model);
// The model as ExportOnnx builds it, unchecked, its graph's floating-point weights of 1 KB
// or more without their values (each its name, type and shape; the constants the export
// adds keep theirs): what ImportOnnx builds again with ImportOptions::shared_weights set
// to the model's graph and weights_left_out, without a copy of its weights.
absl::StatusOr<onnx::ModelProto> ExportOnnxWithoutWeights(const OnnxModel& model);

// The strict shape inference ExportOnnx runs on a model it builds (at opsets the checker
// covers, where SafeForOnnxInference), on a model read from a file: an error, whose message
// names the model as `subject`, where it fails. A model whose written form fails it may
// have failed it as read (a type no schema allows, which ONNX Runtime refuses too), and
// then that is the error to give. (The checker is left out: it refuses files ONNX Runtime
// runs, an output declared without a shape.)
absl::Status InferShapesAsExportDoes(onnx::ModelProto model, absl::string_view subject);

// How many nodes ExportOnnx writes for the model's graph (a convolution with its relu
// fused is two), without its weights; the graph's own count where it cannot be exported.
int OnnxNodeCount(const OnnxModel& model);
bool OnnxCheckerCovers(int opset);
// Whether ExportOnnx checks the model with ONNX's strict shape inference too: its opset
// is covered and it holds no node the installed inference mishandles (such a model is
// checked by the ONNX checker alone).
bool OnnxInferenceChecks(const OnnxModel& model);
// A fresh model shell at the given opset, for graphs built in code.
OnnxModel NewOnnxModel(Graph graph, int opset = kBuiltModelOpset, std::string graph_name = "taso");
// Another graph in `model`'s shell and opset, written at the sizes it has (no symbolic
// dimensions, weights inline): what the pipeline times and estimates.
OnnxModel InShellOf(const OnnxModel& model, Graph graph);
// The most bytes protobuf serializes as one message: a model larger than this cannot be
// one file.
inline constexpr size_t kMaxInlineModelBytes = (size_t{1} << 31) - 1;
// Writes the file atomically: on any error nothing is left at `path`. With
// model.external_data, or where the model would be larger than `max_inline_bytes`, the
// floating-point weights of 1 KB or more go to one file beside it, ExternalDataPath(path),
// copied there one at a time; that file is written first (the ONNX checker, which reads
// the model file written, looks for it), so an error after it leaves neither file, not even
// a pair that was there before. Shape inference runs as ExportOnnx runs it, then the
// checker.
absl::Status ExportOnnxFile(const OnnxModel& model, const std::string& path,
                            size_t max_inline_bytes = kMaxInlineModelBytes);
// Written at `path`, in the folder of `weights`, with the floating-point weights of 1 KB or
// more in that file (each appended only the first time a model holds it); checked as
// ExportOnnxFile checks a model with a data file. On an error nothing is left at `path`.
absl::Status ExportOnnxFile(const OnnxModel& model, const std::string& path, SharedWeightsFile& weights);
absl::Status WriteModelFile(const onnx::ModelProto& model, const std::string& path);
// Writes `model` to `path` through a file beside it, which `check` (if set) must accept
// before it is renamed into place; on any error nothing is left at `path`.
absl::Status WriteModelFileChecked(const onnx::ModelProto& model, const std::string& path,
                                   const std::function<absl::Status(const std::string&)>& check);
std::string ExternalDataPath(const std::string& model_path);
// A folder beside `destination` (".taso-opt-XXXXXX" in its directory) to write it in first,
// so that moving it into place is a rename on one file system.
absl::StatusOr<TemporaryFolder> MakeStagingFolder(const std::string& destination);
// Moves the model written at `staged` to `destination`, with its data file
// (ExternalDataPath) where `data_file`: the data file first, then the model; where the
// model cannot be moved, the data file moved is removed again.
absl::Status MoveModelIntoPlace(const std::string& staged, const std::string& destination, bool data_file);
absl::StatusOr<onnx::ModelProto> ReadModelFile(const std::string& path);

}  // namespace taso
