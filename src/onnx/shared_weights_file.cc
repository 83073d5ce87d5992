#include "taso/onnx/shared_weights_file.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "taso/ir/onnx_tensor.h"
#include "taso/ir/status_macros.h"

namespace taso {

SharedWeightsFile::SharedWeightsFile(std::string path, std::string location)
    : path_(std::move(path)),
      location_(location.empty() ? std::filesystem::path(path_).filename().string() : std::move(location)) {}

absl::Status SharedWeightsFile::Written(absl::Status status) {
  broken_ = broken_ || !status.ok();
  if (broken_ && status.ok()) return absl::InternalError(absl::StrCat("an earlier write to '", path_, "' failed"));
  return status;
}

absl::Status SharedWeightsFile::Open() {
  if (broken_) return Written(absl::OkStatus());
  if (out_.is_open()) return absl::OkStatus();
  out_.open(path_, std::ios::binary | std::ios::trunc);
  if (!out_) return absl::PermissionDeniedError(absl::StrCat("cannot write '", path_, "'"));
  size_ = 0;
  return absl::OkStatus();
}

absl::Status SharedWeightsFile::Place(const TensorDataPtr& data, onnx::TensorProto& init) {
  RETURN_IF_ERROR(Written(absl::OkStatus()));
  if (const auto it = placed_.find(data.get()); it != placed_.end() && it->second.data.lock() == data) {
    SetExternalData(init, location_, it->second.offset, it->second.length);
    return absl::OkStatus();
  }
  onnx::TensorProto filled;
  TensorToProto(*data, init.name(), &filled);
  const auto length = static_cast<int64_t>(filled.raw_data().size());
  RETURN_IF_ERROR(Append(filled));  // at the file's end, after the zeros that align it
  if (filled.data_location() == onnx::TensorProto::EXTERNAL) placed_[data.get()] = Span{data, size_ - length, length};
  init.Swap(&filled);
  return absl::OkStatus();
}

absl::Status SharedWeightsFile::Append(onnx::TensorProto& init) {
  RETURN_IF_ERROR(Open());
  return Written(MoveToExternalData(init, out_, size_, location_));
}

absl::Status SharedWeightsFile::CopyFrom(onnx::TensorProto& init, const std::string& external_data_dir) {
  RETURN_IF_ERROR(Open());
  return Written(CopyExternalData(init, external_data_dir, out_, size_, location_));
}

absl::Status SharedWeightsFile::Flush() {
  RETURN_IF_ERROR(Open());  // the file exists once flushed, empty or not
  if (!out_.flush()) return Written(absl::InternalError(absl::StrCat("failed writing '", path_, "'")));
  return Written(absl::OkStatus());
}

}  // namespace taso
