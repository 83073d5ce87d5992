// What an operator is told about a node's inputs and what it says about its outputs: the
// descriptors every part of the operator interface (semantics, rule form, ONNX mapping,
// backend hooks) shares.
#pragma once

#include "taso/ir/tensor.h"

namespace taso {

// What shape inference knows about one input.
struct InputInfo {
  bool present = true;  // false for an absent optional input
  DataType dtype = DataType::kFloat32;
  Shape shape;
  bool shape_known = true;
  const TensorData* constant = nullptr;  // set when the value is known ahead of time
};

// The inferred type of one output.
struct OutputType {
  DataType dtype = DataType::kFloat32;
  Shape shape;
  bool shape_known = true;
};

}  // namespace taso
