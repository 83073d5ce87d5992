// Copies of an ONNX model that leave out what their use does not read, so that a large
// model's weights (340 MB for a BERT-base encoder) are not copied for it: on this
// machine every fresh page of a copy costs a fault, and whole copies took a fifth of
// such a model's import.
#pragma once

#include "onnx/onnx_pb.h"

namespace taso {

// The model without its graph's nodes, initializers and value_info: every other field
// (opsets, metadata, the graph's name, inputs and outputs, ...) as in `model`.
onnx::ModelProto ShellCopy(const onnx::ModelProto& model);

// The whole model but its graph's initializers.
onnx::ModelProto CopyWithoutInitializers(const onnx::ModelProto& model);

// Whether the ONNX element type (TensorProto.DataType) is a floating-point one: values
// ONNX's shape inference never reads (it reads shape, axis and size inputs, integers).
bool IsFloatingPoint(int data_type);

// The whole model, but each initializer of a floating-point type with more than
// `kLargeInitializerElements` elements keeps only its name, type and dimensions: what
// ONNX's shape inference reads of it (its inference functions read the values of shape,
// axis and size inputs, which are integers or scalars).
inline constexpr int64_t kLargeInitializerElements = 4096;
onnx::ModelProto CopyForShapeInference(const onnx::ModelProto& model);

}  // namespace taso
