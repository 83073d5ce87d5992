// Model-local functions (ModelProto.functions) replaced by their bodies where the main
// graph calls them, so that what they compute is open to the search: an exporter that
// writes each module as a function (PyTorch's export_modules_as_functions, its dynamo
// exporter) otherwise leaves the whole model one opaque node per module.
#pragma once

#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace taso {

// What InlineLocalFunctions did.
struct InlinedFunctions {
  int calls = 0;                       // calls of the main graph replaced (nested calls not counted)
  std::vector<std::string> functions;  // the functions inlined, sorted
  // "name: why" for each function some call of the main graph still makes (written back
  // as it was read).
  std::vector<std::string> kept;
};

// Whether a node of the main graph calls a function the model defines.
bool CallsLocalFunction(const onnx::ModelProto& model);

// Replaces each node of the main graph that calls a function the model defines by the
// function's nodes (and nested calls by theirs), in place: its formal inputs and outputs
// become the call's, its other values get names no other value has, attributes it
// refers to get the call's, else the function's default (IR 9), else are left out. A
// function is told by domain, name and overload (IR 10). A call is left as it is, whole,
// where its function (or one it calls) imports an opset version other than the model's,
// has a node with a subgraph, is not a valid single-assignment body in order, or calls
// itself, and every call is where inlining would add over 2^20 nodes. Functions inlined
// and no longer called are removed, with the imports of their domains where nothing else
// uses them; a function the model did not call stays.
// Calls inside subgraphs are left as they are. The result is meant for CheckStructure
// like any model read.
InlinedFunctions InlineLocalFunctions(onnx::ModelProto& model);

}  // namespace taso
