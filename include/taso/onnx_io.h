// ONNX import and export (opsets 11 to 21).
#pragma once

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
#include "taso/graph.h"
#include "taso/memory_limit.h"

namespace taso {

inline constexpr int kMinOpset = 11;
inline constexpr int kMaxOpset = 21;
// The last opset the installed ONNX library's checker and shape inference know: a model
// at a later opset is exported without them and validated otherwise (see ExportOnnx).
inline constexpr int kMaxCheckedOpset = 17;

// A symbolic dimension of a graph input (ONNX dim_param, or a dimension with neither a
// value nor a name), and the size the imported graph has for it.
struct SymbolicDim {
  std::string param;  // the dim_param; empty for an unnamed dimension
  std::string input;  // the graph input it belongs to
  int axis = 0;
  int64_t value = 1;   // the size the graph is built at
  bool given = false;  // by ImportOptions::input_shapes, else 1
  // Dimensions sharing a key are one variable: the param, or input[axis] when unnamed.
  std::string Key() const;
};

// How each dimension of a value is written: nullopt at the graph's size, "" as a dynamic
// dimension without a name, otherwise as that dim_param.
using DimNames = std::vector<std::optional<std::string>>;

// A model: the graph plus everything of the ONNX file that is not the graph's computation
// (IR version, opset imports, producer, metadata, functions, ...), kept to be written back.
struct OnnxModel {
  Graph graph;
  std::shared_ptr<const onnx::ModelProto> shell;  // the model without nodes and tensors
  int opset = kMaxOpset;                          // of the default ONNX domain
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
};

absl::StatusOr<OnnxModel> ImportOnnx(const onnx::ModelProto& model, const ImportOptions& options = {});
absl::StatusOr<OnnxModel> ImportOnnxFile(const std::string& path, const ImportOptions& options = {});

// Builds the ModelProto; fails if it does not pass the ONNX checker and strict shape
// inference. At opsets the installed checker does not know (OnnxCheckerCovers false)
// only the graph's own consistency is checked: validating such a model is the caller's.
absl::StatusOr<onnx::ModelProto> ExportOnnx(const OnnxModel& model);

// How many nodes ExportOnnx writes for the model's graph (a convolution with its relu
// fused is two), without its weights; the graph's own count where it cannot be exported.
int OnnxNodeCount(const OnnxModel& model);
bool OnnxCheckerCovers(int opset);
// A fresh model shell at the given opset, for graphs built in code.
OnnxModel NewOnnxModel(Graph graph, int opset = kMaxOpset, std::string graph_name = "taso");
// Another graph in `model`'s shell and opset, written at the sizes it has (no symbolic
// dimensions, weights inline): what the pipeline times and estimates.
OnnxModel InShellOf(const OnnxModel& model, Graph graph);
// Writes the file atomically: on any error nothing is left at `path`. With
// model.external_data, the weights go to one file beside it, ExternalDataPath(path).
absl::Status ExportOnnxFile(const OnnxModel& model, const std::string& path);
absl::Status WriteModelFile(const onnx::ModelProto& model, const std::string& path);
std::string ExternalDataPath(const std::string& model_path);
absl::StatusOr<onnx::ModelProto> ReadModelFile(const std::string& path);

// The view of one ONNX node an operator's FromOnnx reads. Attributes that no operator
// reads make the node opaque, so nothing is approximated. The getters give the default
// for an absent attribute; one of another type than the getter reads (Conv strides given
// as FLOATS) is invalid ONNX: the getter gives the default and `status()` reports it, so
// the import fails instead of reading something else (see OnnxMapping::Import).
class OnnxImportNode {
 public:
  OnnxImportNode(const onnx::NodeProto& node, int opset, std::vector<InputInfo> inputs);

  const onnx::NodeProto& proto() const { return node_; }
  int opset() const { return opset_; }
  const std::vector<InputInfo>& inputs() const { return inputs_; }
  int num_outputs() const;

  bool Has(absl::string_view attr) const;
  int64_t Int(absl::string_view attr, int64_t def) const;
  double Float(absl::string_view attr, double def) const;
  std::string Str(absl::string_view attr, absl::string_view def) const;
  std::vector<int64_t> Ints(absl::string_view attr, std::vector<int64_t> def = {}) const;
  // A tensor attribute (e.g. Constant's value); nullptr if absent or unreadable.
  TensorDataPtr Tensor(absl::string_view attr) const;
  // True when every attribute of the node was read.
  bool AllAttributesRead() const;
  // OK, or an InvalidArgumentError naming the first attribute read with another type than
  // the one it holds, the type expected and the type found.
  const absl::Status& status() const { return status_; }

 private:
  // The attribute if present with type `type`; marks it read, and records a type mismatch.
  const onnx::AttributeProto* Find(absl::string_view attr, onnx::AttributeProto::AttributeType type) const;
  const onnx::NodeProto& node_;
  int opset_;
  std::vector<InputInfo> inputs_;
  mutable absl::flat_hash_set<std::string> read_;
  mutable absl::Status status_;
};

// Where an operator writes its ONNX form. Most operators write one node with the node's
// own input and output names; some write several (then `NewName` gives fresh tensor names).
class OnnxExportNode {
 public:
  OnnxExportNode(onnx::GraphProto& graph, std::string node_name, std::vector<std::string> inputs,
                 std::vector<std::string> outputs, std::vector<InputInfo> input_infos,
                 std::vector<OutputType> output_types, int opset, absl::flat_hash_set<std::string>& used_names);

  int opset() const { return opset_; }
  const std::string& input(int i) const { return inputs_[i]; }
  const std::string& output(int i) const { return outputs_[i]; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  const std::vector<std::string>& inputs() const { return inputs_; }
  const std::vector<std::string>& outputs() const { return outputs_; }
  const InputInfo& input_info(int i) const { return input_infos_[i]; }
  const OutputType& output_type(int i) const { return output_types_[i]; }
  const std::string& node_name() const { return name_; }

  // Adds a node; the first one added takes the node's own name.
  onnx::NodeProto* AddNode(absl::string_view op_type, const std::vector<std::string>& inputs,
                           const std::vector<std::string>& outputs);
  // A tensor name not used anywhere in the model.
  std::string NewName(absl::string_view hint);
  // Adds an initializer with a fresh name and returns the name.
  std::string AddInitializer(absl::string_view hint, const TensorData& data);

  static void SetInt(onnx::NodeProto* n, absl::string_view name, int64_t v);
  static void SetFloat(onnx::NodeProto* n, absl::string_view name, double v);
  static void SetStr(onnx::NodeProto* n, absl::string_view name, absl::string_view v);
  static void SetInts(onnx::NodeProto* n, absl::string_view name, const std::vector<int64_t>& v);
  static void SetTensor(onnx::NodeProto* n, absl::string_view name, const TensorData& v);

 private:
  onnx::GraphProto& graph_;
  std::string name_;
  std::vector<std::string> inputs_, outputs_;
  std::vector<InputInfo> input_infos_;
  std::vector<OutputType> output_types_;
  int opset_;
  absl::flat_hash_set<std::string>& used_names_;
  int added_ = 0;
};

}  // namespace taso
