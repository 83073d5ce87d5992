// A model written as it was read without all its weights in memory at once: what taso-opt
// writes where the machine has too little memory to optimize it (pipeline.h,
// TooLittleMemoryToOptimize).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace taso {

// The bytes a model's tensors take as stored, by how the import reads them.
struct StoredTensorBytes {
  int64_t read = 0;    // into memory: the message itself (tensors stored inline), other external data
  int64_t mapped = 0;  // external data read in place from its files (ReadsInPlace)
  int64_t total() const;
};

// The bytes the model's tensors take: the message itself and every tensor it stores as
// external data, in `external_data_dir`, each span once. Fails where a tensor's external
// data cannot be found there.
absl::StatusOr<StoredTensorBytes> StoredModelBytes(const onnx::ModelProto& model, const std::string& external_data_dir);

// Writes `model`, read from a file in `external_data_dir`, to `path` as it is, but for
// the tensors it stores as external data: those are copied, a block at a time and each
// span once, into ExternalDataPath(path), which the file written names. A model
// ReadModelFile accepts but CheckStructure refuses is refused with its error. Both files
// are written in a folder beside `path` (a copy with a data file read back there, each of
// its external tensors found) and only then moved into place; on an error neither is
// there. Returns whether a data file was written.
absl::StatusOr<bool> WriteAsRead(onnx::ModelProto model, const std::string& external_data_dir, const std::string& path);

// Fails where writing `out` (and its data file, ExternalDataPath) would replace a file
// that `model`, read from `input_path`, keeps external data in, unless `out` is that input
// file itself (replaced whole, with its data).
absl::Status CheckOutputSparesInputData(const onnx::ModelProto& model, const std::string& input_path,
                                        const std::string& out);

}  // namespace taso
