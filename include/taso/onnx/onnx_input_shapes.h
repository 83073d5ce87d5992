// The sizes a model's graph inputs are imported at: their static dimensions, and for each
// symbolic one the size ImportOptions::input_shapes gives, else 1.
#pragma once

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"
#include "taso/onnx/onnx_io.h"

namespace taso {

struct BoundInputs {
  std::vector<SymbolicDim> dims;                   // in input order, then axis order
  absl::flat_hash_map<std::string, Shape> shapes;  // of every input that is not a weight
};

// Fails for a name in `given` that is no run-time input, a shape of another rank than
// the input's, a size that disagrees with a static dimension, two sizes for one dim_param,
// and an input without a shape.
absl::StatusOr<BoundInputs> BindInputShapes(const onnx::GraphProto& graph,
                                            const absl::flat_hash_map<std::string, Shape>& given);

// Declares the inputs of `model` named in `shapes` at those shapes.
void SetInputShapes(const absl::flat_hash_map<std::string, Shape>& shapes, onnx::ModelProto& model);

}  // namespace taso
