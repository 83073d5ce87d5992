// ONNX's shape inference and version converter, run where a defect of the ONNX library
// cannot stop the tool.
#pragma once

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace taso {

// Runs ONNX's shape inference (with data propagation) on `model` in a child process: on
// some invalid models the installed library reads out of bounds and the process dies
// (a Gather whose axis exceeds the rank of its input, in data propagation). On success the
// graph's value_info and outputs carry the inferred types and the result is true; when
// inference throws, the child dies or it takes longer than `timeout_seconds`, `model` is
// left as it was and the result is false. Best effort by contract: callers treat types it
// leaves unknown as unknown.
bool InferShapesIsolated(onnx::ModelProto* model, int timeout_seconds = 300);

// `model` converted to `target_opset` by ONNX's version converter, run in a child process
// (the converter assumes a valid model; callers check it first, see onnx_structure.h).
// Fails with InvalidArgument giving the first line of what the converter threw, or saying
// that it crashed or took longer than `timeout_seconds`.
absl::StatusOr<onnx::ModelProto> ConvertVersionIsolated(const onnx::ModelProto& model, int target_opset,
                                                        int timeout_seconds = 120);

}  // namespace taso
