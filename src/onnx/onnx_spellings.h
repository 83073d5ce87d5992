// Spellings ONNX allows for one model that the rest of the import reads in one form only,
// rewritten to that form before it reads the model: nodes and opset imports of the
// domain "ai.onnx" as the default domain "" (ONNX Runtime treats them alike; the file
// written imports the default domain once), and sparse initializers as dense ones.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace taso {

// Whether `model` uses a spelling CommonSpellings rewrites.
bool HasUncommonSpellings(const onnx::ModelProto& model);

// Rewrites `model`'s uncommon spellings in place: "ai.onnx" as "" in the opset imports
// and in the nodes of the graph, its subgraphs and the model's functions; each sparse
// initializer of the main graph as a dense initializer of its name (values stored as
// external data are read from `external_data_dir`). Fails, naming the tensor, where a
// sparse initializer is malformed (indices not INT64 of shape [NNZ] or [NNZ, rank], an
// index outside its dimensions, a values count other than NNZ, strings) or the dense
// forms would take more than `max_dense_bytes` together. Returns the names of the initializers it
// made dense.
absl::StatusOr<std::vector<std::string>> CommonSpellings(onnx::ModelProto& model, const std::string& external_data_dir,
                                                         int64_t max_dense_bytes);

}  // namespace taso
