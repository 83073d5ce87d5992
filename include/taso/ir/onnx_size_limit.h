// Sizes a runtime refuses although ONNX's shape inference lets them through, per ONNX
// operator, for the nodes kept opaque (the library's operators check their own): a
// convolution whose window is larger than its padded input infers an empty output, a
// reflecting Pad wider than its input infers a size. The importer fails on them with
// InvalidArgument, so that a model with symbolic sizes is built at sizes it runs at
// (onnx_input_shapes.h) and a fixed model that cannot run is refused with the reason.
// Each operator states its limit in its own file under ops/.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "onnx/onnx_pb.h"
#include "taso/ir/onnx_op_table.h"
#include "taso/ir/op.h"

namespace taso {

// OK where the node's inputs are sizes it runs at, or where they do not tell (unknown
// shapes, pads not constant); otherwise an error whose message says what does not fit.
using OnnxSizeLimit = absl::Status (*)(const onnx::NodeProto& node, const std::vector<InputInfo>& inputs);

inline void RegisterOnnxSizeLimit(const std::string& onnx_op, OnnxSizeLimit limit) {
  OnnxOpTable<OnnxSizeLimit>::Register(onnx_op, limit);
}
// The limit of an ONNX operator of the default domain, or null.
inline OnnxSizeLimit FindOnnxSizeLimit(absl::string_view onnx_op) { return OnnxOpTable<OnnxSizeLimit>::Find(onnx_op); }

}  // namespace taso

#define TASO_REGISTER_ONNX_SIZE_LIMIT(onnx_op, limit)                          \
  static const bool TASO_CONCAT_REG(taso_onnx_size_limit_, __COUNTER__) = [] { \
    ::taso::RegisterOnnxSizeLimit(onnx_op, limit);                             \
    return true;                                                               \
  }()
