// ONNX's shape inference, run where a defect of the ONNX library cannot stop the tool.
#pragma once

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

}  // namespace taso
