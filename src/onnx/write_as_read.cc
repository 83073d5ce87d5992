#include "taso/onnx/write_as_read.h"

#include <filesystem>
#include <functional>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "onnx_structure.h"
#include "onnx_tensor_walk.h"
#include "taso/ir/memory_limit.h"
#include "taso/ir/onnx_tensor.h"
#include "taso/ir/status_macros.h"
#include "taso/onnx/onnx_io.h"
#include "taso/onnx/shared_weights_file.h"

namespace taso {

namespace {

namespace fs = std::filesystem;

// The walk on a model not to be changed: `visit` only reads.
absl::Status ForEachTensorRead(const onnx::ModelProto& model,
                               const std::function<absl::Status(const onnx::TensorProto&)>& visit) {
  return ForEachTensor(const_cast<onnx::ModelProto&>(model), [&visit](onnx::TensorProto& t) { return visit(t); });
}

bool IsExternal(const onnx::TensorProto& t) { return t.data_location() == onnx::TensorProto::EXTERNAL; }

// Where an external tensor's bytes lie: its file (as the model names it, resolved), offset
// and length; tensors that name the same span share it.
using SpanKey = std::tuple<std::string, std::string, std::string>;
SpanKey SpanKeyOf(const onnx::TensorProto& t) {
  SpanKey key;
  for (const auto& entry : t.external_data()) {
    if (entry.key() == "location") std::get<0>(key) = fs::path(entry.value()).lexically_normal().string();
    if (entry.key() == "offset") std::get<1>(key) = entry.value();
    if (entry.key() == "length") std::get<2>(key) = entry.value();
  }
  return key;
}

// The model's external tensors copied into the data file `data_path`, each span once.
absl::Status CopyExternalTensors(onnx::ModelProto& model, const std::string& external_data_dir,
                                 const std::string& data_path) {
  SharedWeightsFile data(data_path);
  absl::flat_hash_map<SpanKey, onnx::TensorProto> copied;  // each span's tensor as copied
  RETURN_IF_ERROR(ForEachTensor(model, [&](onnx::TensorProto& t) -> absl::Status {
    if (!IsExternal(t)) return absl::OkStatus();
    const SpanKey key = SpanKeyOf(t);
    if (auto it = copied.find(key); it != copied.end()) {
      *t.mutable_external_data() = it->second.external_data();
      return absl::OkStatus();
    }
    RETURN_IF_ERROR(data.CopyFrom(t, external_data_dir));
    copied[key] = t;
    return absl::OkStatus();
  }));
  return data.Flush();
}

// The file at `path` read back, each of its external tensors found in `data_dir`.
absl::Status ReadsBack(const std::string& path, const std::string& data_dir) {
  ASSIGN_OR_RETURN(onnx::ModelProto written, ReadModelFile(path));
  return ForEachTensor(written, [&data_dir](onnx::TensorProto& t) {
    return IsExternal(t) ? ExternalDataBytes(t, data_dir).status() : absl::OkStatus();
  });
}

bool HasExternalTensor(const onnx::ModelProto& model) {
  bool external = false;
  ForEachTensorRead(model, [&external](const onnx::TensorProto& t) {
    external = external || IsExternal(t);
    return absl::OkStatus();
  }).IgnoreError();
  return external;
}

// `model` written at `staged` (in a folder of its own), its external tensors copied into
// the data file beside it.
absl::Status WriteStaged(onnx::ModelProto& model, const std::string& external_data_dir, const std::string& staged,
                         bool external) {
  if (external) RETURN_IF_ERROR(CopyExternalTensors(model, external_data_dir, ExternalDataPath(staged)));
  const std::string staged_dir = ModelDirectory(staged);
  // Only the data file's names are read back: serializing the message read is protobuf's.
  return WriteModelFileChecked(model, staged, [&](const std::string& file) {
    return external ? ReadsBack(file, staged_dir) : absl::OkStatus();
  });
}

}  // namespace

int64_t StoredTensorBytes::total() const { return SaturatingAdd(read, mapped); }

absl::StatusOr<StoredTensorBytes> StoredModelBytes(const onnx::ModelProto& model,
                                                   const std::string& external_data_dir) {
  StoredTensorBytes bytes{.read = static_cast<int64_t>(model.ByteSizeLong())};
  absl::flat_hash_set<std::pair<SpanKey, bool>> counted;  // each span once as read, once as mapped
  RETURN_IF_ERROR(ForEachTensorRead(model, [&](const onnx::TensorProto& t) -> absl::Status {
    if (!IsExternal(t)) return absl::OkStatus();
    ASSIGN_OR_RETURN(const bool in_place, ReadsInPlace(t, external_data_dir));
    if (!counted.insert({SpanKeyOf(t), in_place}).second) return absl::OkStatus();
    ASSIGN_OR_RETURN(const int64_t n, ExternalDataBytes(t, external_data_dir));
    int64_t& counted_as = in_place ? bytes.mapped : bytes.read;
    counted_as = SaturatingAdd(counted_as, n);
    return absl::OkStatus();
  }));
  return bytes;
}

absl::Status CheckOutputSparesInputData(const onnx::ModelProto& model, const std::string& input_path,
                                        const std::string& out) {
  std::error_code ec;
  if (fs::equivalent(input_path, out, ec)) return absl::OkStatus();  // replaced whole, with its data file
  const std::string dir = ModelDirectory(input_path), out_data = ExternalDataPath(out);
  return ForEachTensorRead(model, [&](const onnx::TensorProto& t) -> absl::Status {
    if (!IsExternal(t)) return absl::OkStatus();
    const fs::path data = fs::path(dir) / std::get<0>(SpanKeyOf(t));
    std::error_code e1, e2;
    if (fs::equivalent(data, out, e1) || fs::equivalent(data, out_data, e2))
      return absl::InvalidArgumentError(absl::StrCat("writing '", out, "' would replace '", data.string(),
                                                     "', which holds the input's weights: write the output elsewhere"));
    return absl::OkStatus();
  });
}

absl::StatusOr<bool> WriteAsRead(onnx::ModelProto model, const std::string& external_data_dir,
                                 const std::string& path) {
  ASSIGN_OR_RETURN(const int opset, DefaultOpset(model));
  RETURN_IF_ERROR(CheckStructure(model, opset));
  const bool external = HasExternalTensor(model);
  ASSIGN_OR_RETURN(const TemporaryFolder folder, MakeStagingFolder(path));
  const std::string staged = (fs::path(folder.path()) / fs::path(path).filename()).string();
  RETURN_IF_ERROR(WriteStaged(model, external_data_dir, staged, external));
  RETURN_IF_ERROR(MoveModelIntoPlace(staged, path, external));
  return external;
}

}  // namespace taso
