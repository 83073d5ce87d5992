// A data file that models name their weights in: one model's own (ExportOnnxFile), or one
// shared by the models written into its folder (a timer's: the input and each candidate
// hold mostly the same weights, and a 2.9 GB decoder took 10 s to write each time).
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "onnx/onnx_pb.h"
#include "taso/ir/tensor.h"

namespace taso {

// Each weight is appended once; a model written later that holds the same tensor (the same
// TensorData in memory, while it lives; a model's tied weights too) names the bytes already
// there. The file only
// grows; removing it is the caller's. After a failed write every later call fails too
// (what was recorded may not be on disk): a caller starts another file.
class SharedWeightsFile {
 public:
  // `location`: the file's name as the models name it (default: the name in `path`; another
  // where the file is written under a temporary name first).
  explicit SharedWeightsFile(std::string path, std::string location = "");
  SharedWeightsFile(const SharedWeightsFile&) = delete;
  SharedWeightsFile& operator=(const SharedWeightsFile&) = delete;
  const std::string& path() const { return path_; }

  // Makes the initializer `init` (its name, type and shape) name `data`'s values in the
  // file, appending them where they are not there yet; a tensor of typed fields (no raw
  // bytes) gets its values inline instead.
  absl::Status Place(const TensorDataPtr& data, onnx::TensorProto& init);
  // Appends the initializer's raw bytes and names them (typed fields stay inline).
  absl::Status Append(onnx::TensorProto& init);
  // Appends the bytes the initializer names in its own data file (in `external_data_dir`),
  // a block at a time, and names them here.
  absl::Status CopyFrom(onnx::TensorProto& init, const std::string& external_data_dir);
  // Everything appended on disk, for a reader of the file (made, empty, where nothing was).
  absl::Status Flush();

 private:
  struct Span {
    std::weak_ptr<const TensorData> data;  // expired: the address may hold another tensor now
    int64_t offset = 0, length = 0;
  };
  absl::Status Open();

  // Fails, and keeps failing, once a write has failed.
  absl::Status Written(absl::Status status);

  std::string path_, location_;
  std::ofstream out_;
  bool broken_ = false;
  int64_t size_ = 0;
  absl::flat_hash_map<const TensorData*, Span> placed_;
};

}  // namespace taso
