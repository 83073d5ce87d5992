// Structural checks on a model from outside, run before any of ONNX's own code (version
// converter, shape inference, checker) sees it: that code assumes a valid model and may
// dereference a null pointer, read out of bounds or loop forever on one that is not.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace taso {

// Whether a node or opset import of `domain` is of ONNX's default operator set.
bool IsDefaultDomain(const std::string& domain);

// Calls `visit` on each subgraph of a node's attributes.
void ForEachSubgraph(const onnx::NodeProto& n, const std::function<void(const onnx::GraphProto&)>& visit);

// "node 'name' (OpType)", as errors name a node.
std::string DescribeNode(const onnx::NodeProto& n);

// Names a node's subgraphs read (node inputs and subgraph outputs) that they do not
// define: the outer-scope values the node depends on.
std::vector<std::string> SubgraphCaptures(const onnx::NodeProto& n);

// The nodes of `g` in an order where each comes after the producers of what it reads
// (the file's order where it can); `outer` holds the names defined outside the nodes
// (inputs, initializers). Fails where a name is defined twice, a node reads a name
// nothing defines, or the nodes form a cycle.
absl::StatusOr<std::vector<int>> SortNodes(const onnx::GraphProto& g, const absl::flat_hash_set<std::string>& outer);

// The version of the default ONNX opset the model imports: below kMinOpset, the importer
// converts it to it first; above kMaxOpset, refused.
absl::StatusOr<int> DefaultOpset(const onnx::ModelProto& model);

// Fails, with one line naming the first problem, unless: the model imports the default
// opset once; every graph input, initializer and graph output is named, and none twice;
// every node has an op_type and names each output its schema at `opset` marks single
// (neither optional nor variadic), in the graph and its subgraphs; the nodes sort (SortNodes); every graph
// output is produced by a node or is an input or initializer, and there is one; every
// subgraph output is defined in its scope; no declared input dimension is negative.
absl::Status CheckStructure(const onnx::ModelProto& model, int opset);

// Whether ONNX's shape inference can run on the graph. It assumes valid nodes: on a node
// its schema refuses (a Constant given an input) it may read past what is there, it
// divides by every "strides" attribute unchecked (a stride of 0 stops the process with
// SIGFPE), and some valid nodes it mishandles (taso/ir/onnx_inference_hazard.h). So every
// node of the default domain, in the graph and its subgraphs, must pass its schema's
// checks, have positive strides and be no such hazard; otherwise the importer's own
// checks, which name what is wrong, decide, and the export's check leaves inference out.
bool SafeForOnnxInference(const onnx::GraphProto& g, int opset);

// What ONNX's version converter needs beyond CheckStructure, for a model at `opset`:
// every node, subgraphs included, is of the default domain, has a schema at `opset` and
// passes its checks (inputs, outputs, attributes), and every declared dimension fits the
// converter's int (at most 2^31 - 1).
absl::Status CheckConvertible(const onnx::ModelProto& model, int opset);

}  // namespace taso
