// The ONNX opsets the tool reads and writes, and the views of one ONNX node through which
// an operator reads and writes its ONNX form (OnnxMapping). Model import and export are
// the ONNX layer's (taso/onnx/onnx_io.h).
#pragma once

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "onnx/onnx_pb.h"
#include "taso/ir/op_types.h"
#include "taso/ir/tensor.h"

namespace taso {

inline constexpr int kMinOpset = 11;
// The newest opset read (the newest ONNX Runtime 1.30 runs). Opsets 22 to 25 changed only
// the element types the library's operators accept (bfloat16, low-precision floats and
// integers) and added operators, and 26 only added operators; so the library reads and
// writes their nodes as at 21 (docs/decisions/ir-and-onnx.md).
inline constexpr int kMaxOpset = 26;
// The opset of models built here (examples/models), which ONNX Runtime releases from 1.20
// run.
inline constexpr int kBuiltModelOpset = 21;
// The last opset the installed ONNX library's checker and shape inference know: a model
// at a later opset is exported without them and validated otherwise (see ExportOnnx).
inline constexpr int kMaxCheckedOpset = 17;

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
