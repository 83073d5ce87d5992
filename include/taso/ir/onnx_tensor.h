// Conversion between ONNX TensorProto and TensorData.
#pragma once

#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"
#include "taso/ir/tensor.h"

namespace taso {

// A tensor stored as external data is read from its file in `external_data_dir`: the
// location must be a relative path inside that directory, and offset and length within
// the file. Without a directory such a tensor is refused.
absl::StatusOr<TensorDataPtr> TensorFromProto(const onnx::TensorProto& proto,
                                              const std::string& external_data_dir = "");
// The tensor stored as external data (in `external_data_dir`, as TensorFromProto reads
// it) with its bytes read into raw_data.
absl::StatusOr<onnx::TensorProto> WithExternalDataRead(const onnx::TensorProto& proto,
                                                       const std::string& external_data_dir);

// How many bytes of its data file a tensor stored as external data names (in
// `external_data_dir`, checked as TensorFromProto checks it).
absl::StatusOr<int64_t> ExternalDataBytes(const onnx::TensorProto& proto, const std::string& external_data_dir);
// Whether TensorFromProto reads that tensor's values in place, from a mapping of its file,
// rather than into memory: float32 values, at an offset a float can be read at (a file
// the system then cannot map is read into memory after all). Fails as ExternalDataBytes.
absl::StatusOr<bool> ReadsInPlace(const onnx::TensorProto& proto, const std::string& external_data_dir);
// Copies the tensor's external bytes (in `external_data_dir`) to the end of the open file
// `data` (written as `location`, relative to the model; `offset` its size) a block at a
// time, never holding them whole, and records where they are: at an aligned offset (16
// bytes, a page for 1 MiB or more), zeros before it.
absl::Status CopyExternalData(onnx::TensorProto& proto, const std::string& external_data_dir, std::ostream& data,
                              int64_t& offset, const std::string& location);

void TensorToProto(const TensorData& data, const std::string& name, onnx::TensorProto* proto);

// Whether `data` holds exactly the values of `proto`, a float tensor (stored as external
// data: in `external_data_dir`, as TensorFromProto reads it), so that a weight already read
// can stand for it.
bool HoldsValuesOf(const TensorData& data, const onnx::TensorProto& proto, const std::string& external_data_dir = "");

// Says that the tensor's values are `length` bytes at `offset` of the file `location`
// (relative to the model), its raw data dropped.
void SetExternalData(onnx::TensorProto& proto, const std::string& location, int64_t offset, int64_t length);

// Moves the tensor's raw data to the end of the open file `data` (written as `location`,
// relative to the model; `offset` its size) and records where it is, aligned as
// CopyExternalData aligns.
absl::Status MoveToExternalData(onnx::TensorProto& proto, std::ostream& data, int64_t& offset,
                                const std::string& location);

}  // namespace taso
