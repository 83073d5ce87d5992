// The computation graph: a DAG of operator nodes over tensor values, with several inputs,
// weights that carry data, and several outputs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "taso/ir/op.h"
#include "taso/ir/params.h"
#include "taso/ir/tensor.h"

namespace onnx {
class NodeProto;
}

namespace taso {

using ValueId = int32_t;
using NodeId = int32_t;
inline constexpr ValueId kNoValue = -1;  // an absent optional input
inline constexpr NodeId kNoNode = -1;

struct Value {
  std::string name;
  DataType dtype = DataType::kFloat32;
  Shape shape;
  bool shape_known = true;    // false only for some outputs of opaque nodes
  NodeId producer = kNoNode;  // kNoNode for graph inputs and weights
  int producer_output = 0;
  TensorDataPtr data;           // set for weights: initializers, with their (default) data
  bool is_graph_input = false;  // fed at run time (or an initializer also listed as input)

  bool is_weight() const { return data != nullptr; }
  // Known ahead of time: a weight the user cannot feed. An initializer that is also a
  // graph input is a run-time value whose data is only its default: it is never folded,
  // fused, packed or propagated as a constant, and is written back as input and initializer.
  bool is_constant() const { return data != nullptr && !is_graph_input; }
};

struct Node {
  std::string name;
  const OpDef* op = nullptr;
  Params params;
  std::vector<ValueId> inputs;  // kNoValue marks an absent optional input
  // Every entry a value. An opaque node's omitted optional outputs (ONNX's "") have none:
  // its NodeProto keeps their places, so they are written back as they were.
  std::vector<ValueId> outputs;
  // For opaque nodes: the ONNX node, kept whole so it is written back unchanged.
  std::shared_ptr<const onnx::NodeProto> onnx_node;
};

class Graph {
 public:
  // A run-time input of the given type.
  absl::StatusOr<ValueId> AddInput(std::string name, DataType dtype, Shape shape);
  // A weight: a named constant.
  absl::StatusOr<ValueId> AddWeight(std::string name, TensorDataPtr data);
  // A library operator; infers and checks the output types. Output names not given (no
  // names, or an empty one) are generated.
  absl::StatusOr<std::vector<ValueId>> AddNode(const OpDef* op, Params params, std::vector<ValueId> inputs,
                                               std::string name = "", std::vector<std::string> output_names = {});
  // A node the library does not model, with the output types found at import. The names
  // are the NodeProto's outputs without the omitted ones (""), in order, each with its type.
  absl::StatusOr<std::vector<ValueId>> AddOpaqueNode(std::shared_ptr<const onnx::NodeProto> node,
                                                     std::vector<ValueId> inputs, std::vector<std::string> output_names,
                                                     std::vector<OutputType> output_types);
  absl::Status AddOutput(ValueId v);
  // Lists a weight among the graph inputs too (an ONNX initializer that is also an input,
  // whose value a caller may override).
  absl::Status MarkWeightAsInput(ValueId v);

  const Value& value(ValueId id) const { return values_[id]; }
  const Node& node(NodeId id) const { return nodes_[id]; }
  int num_values() const { return static_cast<int>(values_.size()); }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  // Weights in the order they were added.
  std::vector<ValueId> weights() const;
  // Finds a value by name, or kNoValue.
  ValueId FindValue(absl::string_view name) const;

  // The value's data when it is known ahead of time (Value::is_constant, or a Constant's
  // output); null for a run-time value, an initializer that is also an input included.
  const TensorData* ConstantData(ValueId v) const;
  // What shape inference sees of a node's inputs.
  std::vector<InputInfo> InputInfos(const Node& n) const;
  // The types of a node's outputs, as shape inference gave them.
  std::vector<OutputType> OutputTypes(const Node& n) const;

  // Nodes in a dependency order (deterministic); an error naming a node on a cycle.
  absl::StatusOr<std::vector<NodeId>> TopologicalOrder() const;
  // Checks references, acyclicity and that every output is defined.
  absl::Status Validate() const;

  // A hash of the computation that does not depend on node or value numbering, nor on
  // names: two graphs that compute the same way from the same inputs and weights hash alike.
  uint64_t StructuralHash() const;
  // The memory a copy of the graph holds, roughly (weights' data, shared between copies,
  // left out): what bounds how many graphs a search keeps.
  int64_t ApproxBytes() const;
  // A readable, deterministic listing of the whole graph (names, ops, params, shapes).
  std::string DebugString() const;

 private:
  absl::Status CheckNewName(const std::string& name) const;
  // Each non-empty name new and none given twice (the outputs of one node).
  absl::Status CheckNewNames(const std::vector<std::string>& names) const;
  std::string UniqueName(absl::string_view hint);
  ValueId NewOutput(std::string name, const OutputType& type, NodeId producer, int index);

  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  absl::flat_hash_map<std::string, ValueId> by_name_;
  int64_t name_counter_ = 0;
};

// Who uses each value of a graph: the nodes that read it and whether it is a graph
// output. Built once for a graph that no longer changes.
class UseIndex {
 public:
  explicit UseIndex(const Graph& graph);

  // The nodes that read `v`, each once, in increasing id order.
  const std::vector<NodeId>& readers(ValueId v) const { return readers_[v]; }
  bool is_graph_output(ValueId v) const { return is_graph_output_[v]; }
  // The one node reading `v`, when it reads `v` in one input only and `v` is no graph
  // output; else kNoNode.
  NodeId SoleReader(ValueId v) const;

 private:
  std::vector<std::vector<NodeId>> readers_;  // per value
  std::vector<int> reads_;                    // per value: inputs reading it, over all nodes
  std::vector<bool> is_graph_output_;         // per value
};

// The first of the names base_<next>, base_<next + 1>, ... that is not `taken`; `next`
// is left at the number after the one used.
std::string NextFreeName(absl::string_view base, int64_t& next, absl::FunctionRef<bool(absl::string_view)> taken);

}  // namespace taso
