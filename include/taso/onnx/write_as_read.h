// A model written as it was read without all its weights in memory at once: what taso-opt
// writes where the machine has too little memory to optimize it (pipeline.h,
// TooLittleMemoryToOptimize).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace taso {

// The bytes the model's tensors take: the message itself (its tensors stored inline) and
// every tensor it stores as external data, in `external_data_dir`. Fails where a tensor's
// external data cannot be found there.
absl::StatusOr<int64_t> StoredModelBytes(const onnx::ModelProto& model, const std::string& external_data_dir);

// Writes `model`, read from a file in `external_data_dir`, to `path` as it is, but for
// the tensors it stores as external data: those are copied, a block at a time, into
// ExternalDataPath(path), which the file written names. A model ReadModelFile accepts but
// CheckStructure refuses is refused with its error. A file with a data file is read back
// and each of its external tensors found there. On any error neither file is left.
// Returns whether a data file was written.
absl::StatusOr<bool> WriteAsRead(onnx::ModelProto model, const std::string& external_data_dir, const std::string& path);

}  // namespace taso
