// Static types read off ONNX type protos: what import and the stale-declaration check take
// as a declaration only where every dimension is a number.
#pragma once

#include <optional>

#include "onnx/onnx_pb.h"
#include "taso/ir/op_types.h"

namespace taso {

// The static shape of a tensor type; nothing where it has none or a dimension is symbolic.
std::optional<Shape> StaticShape(const onnx::TypeProto& t);

// Element type and static shape of a tensor type; nothing where StaticShape gives none.
std::optional<OutputType> StaticType(const onnx::TypeProto& t);

}  // namespace taso
