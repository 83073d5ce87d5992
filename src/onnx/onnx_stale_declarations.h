// Shapes a model's file declares for its values (value_info, graph outputs) that what
// their inputs give contradicts: stale declarations, as a file keeps after an edit of an
// input's shape (a batch size set by hand in a model saved with ONNX's inferred shapes).
// ONNX Runtime reads such a file by what the inputs give (it warns and merges leniently);
// import does the same, where it finds one only (StaleDeclarationError): ONNX's shape
// inference runs again without the declarations to tell which are stale.
#pragma once

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "onnx/onnx_pb.h"
#include "taso/onnx/onnx_io.h"

namespace taso {

// The error import fails with where a value's declared shape is not what a library
// operator computes from its inputs: InvalidArgument with `message`, marked so that
// IsStaleDeclarationError tells it from other errors.
absl::Status StaleDeclarationError(const std::string& message);
bool IsStaleDeclarationError(const absl::Status& status);

// The static declarations of `model`'s main graph whose static shape ONNX's shape
// inference, run over the model without them and with its inputs at `input_shapes` where
// named there, gives otherwise. Empty where there is none or the inference gives nothing.
std::vector<StaleDeclaration> FindStaleDeclarations(const onnx::ModelProto& model,
                                                    const absl::flat_hash_map<std::string, Shape>& input_shapes);

// `model` without the value_info entries `stale` names, and with the graph outputs it
// names declared at the shapes computed.
void DropStaleDeclarations(const std::vector<StaleDeclaration>& stale, onnx::ModelProto& model);

}  // namespace taso
