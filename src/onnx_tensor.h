// Conversion between ONNX TensorProto and TensorData.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"
#include "taso/tensor.h"

namespace taso {

absl::StatusOr<TensorDataPtr> TensorFromProto(const onnx::TensorProto& proto);
void TensorToProto(const TensorData& data, const std::string& name, onnx::TensorProto* proto);

}  // namespace taso
