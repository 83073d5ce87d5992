// Every tensor an ONNX model holds, wherever it is: initializers and sparse initializers
// of its graph and subgraphs, node attributes', functions' and training graphs'.
#pragma once

#include <functional>

#include "absl/status/status.h"
#include "onnx/onnx_pb.h"

namespace taso {

// Called on each tensor in turn; the walk stops at the first error and returns it.
using VisitTensor = std::function<absl::Status(onnx::TensorProto&)>;

// The tensors of a node's attributes, and of its subgraphs.
absl::Status ForEachTensor(onnx::NodeProto& node, const VisitTensor& visit);
absl::Status ForEachTensor(onnx::GraphProto& g, const VisitTensor& visit);
// Every tensor the model holds: its graph's, its functions' nodes', its training graphs'.
absl::Status ForEachTensor(onnx::ModelProto& model, const VisitTensor& visit);

}  // namespace taso
