// Constant folding at ONNX import, per ONNX operator: the value of a node's output when it
// follows from int64 constants and static shapes alone (shape arithmetic: PyTorch exports
// compute slice bounds as Shape -> Gather -> Add -> Div -> Mul). Each operator states its
// rule in its own file under ops/; the importer finds it by ONNX op type.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "onnx/onnx_pb.h"
#include "taso/ir/onnx_op_table.h"
#include "taso/ir/op.h"
#include "taso/ir/tensor.h"

namespace taso {

// The folded value, or nullopt when the inputs do not determine it here.
using OnnxFolder = std::optional<TensorDataPtr> (*)(const onnx::NodeProto& node, int opset,
                                                    const std::vector<InputInfo>& inputs);

inline void RegisterOnnxFolder(const std::string& onnx_op, OnnxFolder fold) {
  OnnxOpTable<OnnxFolder>::Register(onnx_op, fold);
}
// The rule for an ONNX operator of the default domain, or null.
inline OnnxFolder FindOnnxFolder(absl::string_view onnx_op) { return OnnxOpTable<OnnxFolder>::Find(onnx_op); }

}  // namespace taso

#define TASO_REGISTER_ONNX_FOLDER(onnx_op, fold)                           \
  static const bool TASO_CONCAT_REG(taso_onnx_folder_, __COUNTER__) = [] { \
    ::taso::RegisterOnnxFolder(onnx_op, fold);                             \
    return true;                                                           \
  }()
