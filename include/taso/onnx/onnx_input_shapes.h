// The sizes a model's graph inputs are imported at: their static dimensions, and for each
// symbolic one the size ImportOptions::input_shapes gives, else 1 (else the smallest power
// of two the model builds at).
#pragma once

#include <functional>
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
  // The inputs of no declared shape, each at the shape given for it, every dimension an
  // unnamed symbolic one.
  std::vector<std::string> shapeless;
};

// Fails for a name in `given` that is no run-time input, a shape of another rank than
// the input's, a size that disagrees with a static dimension, two sizes for one dim_param,
// and an input without a shape that `given` gives none for.
absl::StatusOr<BoundInputs> BindInputShapes(const onnx::GraphProto& graph,
                                            const absl::flat_hash_map<std::string, Shape>& given);

// Imports a model at the sizes bound to its inputs.
using BuildAtSizes = std::function<absl::StatusOr<OnnxModel>(const BoundInputs&)>;

// Where a model does not build with its symbolic dimensions that no size was given for at
// 1 (`at_one`, an invalid-argument error: a convolution's kernel larger than a 1x1 image),
// it is built with all of them at the smallest power of two up to kMaxGrownSize that it
// builds at, each then put back to 1 where it still builds so (a batch). Fails with
// `at_one`, saying what was tried, where none builds or the error is of another kind.
inline constexpr int64_t kMaxGrownSize = 1024;
absl::StatusOr<OnnxModel> BuiltAtGrownSizes(const BoundInputs& bound, const absl::Status& at_one,
                                            const BuildAtSizes& build);

// Declares the inputs of `model` named in `shapes` at those shapes.
void SetInputShapes(const absl::flat_hash_map<std::string, Shape>& shapes, onnx::ModelProto& model);

}  // namespace taso
