#include "taso/onnx/write_as_read.h"

#include <cstdio>
#include <filesystem>
#include <functional>

#include "absl/strings/str_cat.h"
#include "onnx_structure.h"
#include "taso/ir/onnx_tensor.h"
#include "taso/ir/status_macros.h"
#include "taso/onnx/onnx_io.h"
#include "taso/onnx/shared_weights_file.h"

namespace taso {

namespace {

using VisitTensor = std::function<absl::Status(onnx::TensorProto&)>;

absl::Status ForEachTensor(onnx::GraphProto& g, const VisitTensor& visit);

absl::Status ForEachTensor(onnx::SparseTensorProto& sparse, const VisitTensor& visit) {
  RETURN_IF_ERROR(visit(*sparse.mutable_values()));
  return visit(*sparse.mutable_indices());
}

// The tensors of a node's attributes, and of its subgraphs.
absl::Status ForEachTensor(onnx::NodeProto& node, const VisitTensor& visit) {
  for (onnx::AttributeProto& a : *node.mutable_attribute()) {
    if (a.has_t()) RETURN_IF_ERROR(visit(*a.mutable_t()));
    for (onnx::TensorProto& t : *a.mutable_tensors()) RETURN_IF_ERROR(visit(t));
    if (a.has_sparse_tensor()) RETURN_IF_ERROR(ForEachTensor(*a.mutable_sparse_tensor(), visit));
    for (onnx::SparseTensorProto& s : *a.mutable_sparse_tensors()) RETURN_IF_ERROR(ForEachTensor(s, visit));
    if (a.has_g()) RETURN_IF_ERROR(ForEachTensor(*a.mutable_g(), visit));
    for (onnx::GraphProto& sub : *a.mutable_graphs()) RETURN_IF_ERROR(ForEachTensor(sub, visit));
  }
  return absl::OkStatus();
}

absl::Status ForEachTensor(onnx::GraphProto& g, const VisitTensor& visit) {
  for (onnx::TensorProto& t : *g.mutable_initializer()) RETURN_IF_ERROR(visit(t));
  for (onnx::SparseTensorProto& s : *g.mutable_sparse_initializer()) RETURN_IF_ERROR(ForEachTensor(s, visit));
  for (onnx::NodeProto& n : *g.mutable_node()) RETURN_IF_ERROR(ForEachTensor(n, visit));
  return absl::OkStatus();
}

// Every tensor the model holds: its graph's and its functions' nodes'.
absl::Status ForEachTensor(onnx::ModelProto& model, const VisitTensor& visit) {
  RETURN_IF_ERROR(ForEachTensor(*model.mutable_graph(), visit));
  for (onnx::FunctionProto& f : *model.mutable_functions())
    for (onnx::NodeProto& n : *f.mutable_node()) RETURN_IF_ERROR(ForEachTensor(n, visit));
  return absl::OkStatus();
}

bool IsExternal(const onnx::TensorProto& t) { return t.data_location() == onnx::TensorProto::EXTERNAL; }

// The model's external tensors copied into a data file at `data_path`, written under
// another name first; on an error no file is left.
absl::Status CopyExternalTensors(onnx::ModelProto& model, const std::string& external_data_dir,
                                 const std::string& data_path) {
  const std::string tmp = data_path + ".tmp";
  absl::Status status;
  {
    SharedWeightsFile data(tmp, std::filesystem::path(data_path).filename().string());
    status = ForEachTensor(model, [&](onnx::TensorProto& t) {
      return IsExternal(t) ? data.CopyFrom(t, external_data_dir) : absl::OkStatus();
    });
    if (status.ok()) status = data.Flush();
  }
  if (status.ok() && std::rename(tmp.c_str(), data_path.c_str()) != 0)
    status = absl::PermissionDeniedError(absl::StrCat("cannot write '", data_path, "'"));
  if (!status.ok()) std::remove(tmp.c_str());
  return status;
}

// The file at `path` read back, each of its external tensors found in `data_dir`.
absl::Status ReadsBack(const std::string& path, const std::string& data_dir) {
  ASSIGN_OR_RETURN(onnx::ModelProto written, ReadModelFile(path));
  return ForEachTensor(written, [&data_dir](onnx::TensorProto& t) {
    return IsExternal(t) ? ExternalDataBytes(t, data_dir).status() : absl::OkStatus();
  });
}

}  // namespace

absl::StatusOr<int64_t> StoredModelBytes(const onnx::ModelProto& model, const std::string& external_data_dir) {
  int64_t bytes = static_cast<int64_t>(model.ByteSizeLong());
  // The walk changes nothing: the visit only reads.
  RETURN_IF_ERROR(ForEachTensor(const_cast<onnx::ModelProto&>(model), [&](onnx::TensorProto& t) -> absl::Status {
    if (!IsExternal(t)) return absl::OkStatus();
    ASSIGN_OR_RETURN(const int64_t n, ExternalDataBytes(t, external_data_dir));
    bytes += n;
    return absl::OkStatus();
  }));
  return bytes;
}

absl::StatusOr<bool> WriteAsRead(onnx::ModelProto model, const std::string& external_data_dir,
                                 const std::string& path) {
  ASSIGN_OR_RETURN(const int opset, DefaultOpset(model));
  RETURN_IF_ERROR(CheckStructure(model, opset));
  bool external = false;
  ForEachTensor(model, [&external](onnx::TensorProto& t) {
    external = external || IsExternal(t);
    return absl::OkStatus();
  }).IgnoreError();
  const std::string data_path = ExternalDataPath(path);
  if (external) RETURN_IF_ERROR(CopyExternalTensors(model, external_data_dir, data_path));
  const std::string out_dir = ModelDirectory(path);
  // Only the data file's names are read back: serializing the message read is protobuf's.
  const absl::Status written = WriteModelFileChecked(
      model, path, [&](const std::string& file) { return external ? ReadsBack(file, out_dir) : absl::OkStatus(); });
  if (!written.ok()) {
    if (external) std::remove(data_path.c_str());
    return written;
  }
  return external;
}

}  // namespace taso
