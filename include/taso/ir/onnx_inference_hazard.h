// Nodes the installed ONNX library's shape inference mishandles although they are valid:
// ONNX 1.12 counts an implicit-output Einsum's letters in an array indexed by `c - 'a'`,
// so an uppercase letter writes outside it and the process dies. Per ONNX operator, each
// stated in its own file under ops/; ONNX's inference is not run on a model holding one
// (taso/onnx's SafeForOnnxInference), as on a model that fails its schema checks.
#pragma once

#include <string>

#include "absl/strings/string_view.h"
#include "onnx/onnx_pb.h"
#include "taso/ir/onnx_op_table.h"
#include "taso/ir/op.h"

namespace taso {

// True where ONNX's shape inference must not see `node`.
using OnnxInferenceHazard = bool (*)(const onnx::NodeProto& node);

inline void RegisterOnnxInferenceHazard(const std::string& onnx_op, OnnxInferenceHazard hazard) {
  OnnxOpTable<OnnxInferenceHazard>::Register(onnx_op, hazard);
}
// The hazard of an ONNX operator of the default domain, or null.
inline OnnxInferenceHazard FindOnnxInferenceHazard(absl::string_view onnx_op) {
  return OnnxOpTable<OnnxInferenceHazard>::Find(onnx_op);
}

}  // namespace taso

#define TASO_REGISTER_ONNX_INFERENCE_HAZARD(onnx_op, hazard)                         \
  static const bool TASO_CONCAT_REG(taso_onnx_inference_hazard_, __COUNTER__) = [] { \
    ::taso::RegisterOnnxInferenceHazard(onnx_op, hazard);                            \
    return true;                                                                     \
  }()
