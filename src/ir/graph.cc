#include "taso/ir/graph.h"

#include <algorithm>
#include <queue>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onnx/onnx_pb.h"
#include "taso/ir/status_macros.h"

namespace taso {

namespace {

// Shapes whose element count overflows int64_t are refused where values are made.
absl::Status CheckCountable(absl::string_view what, const Shape& shape) {
  if (CheckedNumElements(shape)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, " has shape ", ShapeToString(shape), ", whose element count a 64-bit integer cannot hold"));
}

// The export writes an opaque node's NodeProto back as it is, so its values must be named
// as the NodeProto names its outputs.
absl::Status CheckOpaqueOutputNames(const onnx::NodeProto& proto, const std::vector<std::string>& names) {
  std::vector<std::string> present;
  for (const std::string& out : proto.output())
    if (!out.empty()) present.push_back(out);
  if (present != names)
    return absl::InvalidArgumentError(absl::StrCat("opaque node '", proto.name(), "': outputs named [",
                                                   absl::StrJoin(names, ", "), "] but its ONNX node writes [",
                                                   absl::StrJoin(present, ", "), "]"));
  return absl::OkStatus();
}

}  // namespace

absl::Status Graph::CheckNewName(const std::string& name) const {
  if (name.empty()) return absl::InvalidArgumentError("tensor name is empty");
  if (by_name_.contains(name))
    return absl::InvalidArgumentError(absl::StrCat("tensor name '", name, "' is defined twice"));
  return absl::OkStatus();
}

absl::Status Graph::CheckNewNames(const std::vector<std::string>& names) const {
  absl::flat_hash_set<absl::string_view> seen;
  for (const std::string& name : names) {
    if (name.empty()) continue;  // generated
    RETURN_IF_ERROR(CheckNewName(name));
    if (!seen.insert(name).second)
      return absl::InvalidArgumentError(absl::StrCat("tensor name '", name, "' is given to two outputs of one node"));
  }
  return absl::OkStatus();
}

std::string NextFreeName(absl::string_view base, int64_t& next, absl::FunctionRef<bool(absl::string_view)> taken) {
  std::string name;
  do {
    name = absl::StrCat(base, "_", next++);
  } while (taken(name));
  return name;
}

std::string Graph::UniqueName(absl::string_view hint) {
  return NextFreeName(hint, name_counter_, [this](absl::string_view name) { return by_name_.contains(name); });
}

absl::StatusOr<ValueId> Graph::AddInput(std::string name, DataType dtype, Shape shape) {
  RETURN_IF_ERROR(CheckNewName(name));
  for (int64_t d : shape)
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("input '", name, "' has a negative dimension"));
  RETURN_IF_ERROR(CheckCountable(absl::StrCat("input '", name, "'"), shape));
  Value v;
  v.name = std::move(name);
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.is_graph_input = true;
  ValueId id = num_values();
  by_name_[v.name] = id;
  values_.push_back(std::move(v));
  inputs_.push_back(id);
  return id;
}

absl::StatusOr<ValueId> Graph::AddWeight(std::string name, TensorDataPtr data) {
  RETURN_IF_ERROR(CheckNewName(name));
  if (data == nullptr) return absl::InvalidArgumentError(absl::StrCat("weight '", name, "' has no data"));
  Value v;
  v.name = std::move(name);
  v.dtype = data->dtype();
  v.shape = data->shape();
  v.data = std::move(data);
  ValueId id = num_values();
  by_name_[v.name] = id;
  values_.push_back(std::move(v));
  return id;
}

const TensorData* Graph::ConstantData(ValueId v) const {
  if (v == kNoValue) return nullptr;
  const Value& val = values_[v];
  if (val.is_constant()) return val.data.get();
  if (val.producer == kNoNode) return nullptr;
  const Node& n = nodes_[val.producer];
  return n.op->ConstantOutput(n.params).get();
}

std::vector<OutputType> Graph::OutputTypes(const Node& n) const {
  std::vector<OutputType> types;
  for (ValueId id : n.outputs) types.push_back({values_[id].dtype, values_[id].shape, values_[id].shape_known});
  return types;
}

std::vector<InputInfo> Graph::InputInfos(const Node& n) const {
  std::vector<InputInfo> infos;
  infos.reserve(n.inputs.size());
  for (ValueId id : n.inputs) {
    InputInfo info;
    if (id == kNoValue) {
      info.present = false;
      info.dtype = DataType::kUndefined;
    } else {
      const Value& v = values_[id];
      info.dtype = v.dtype;
      info.shape = v.shape;
      info.shape_known = v.shape_known;
      info.constant = ConstantData(id);
    }
    infos.push_back(std::move(info));
  }
  return infos;
}

absl::StatusOr<std::vector<ValueId>> Graph::AddNode(const OpDef* op, Params params, std::vector<ValueId> inputs,
                                                    std::string name, std::vector<std::string> output_names) {
  if (op == nullptr) return absl::InvalidArgumentError("null operator");
  for (ValueId id : inputs)
    if (id != kNoValue && (id < 0 || id >= num_values()))
      return absl::InvalidArgumentError(absl::StrCat("node '", name, "' reads an unknown value"));
  Node node;
  node.op = op;
  node.params = std::move(params);
  node.inputs = std::move(inputs);
  if (name.empty()) name = absl::StrCat(op->name(), "_", nodes_.size());
  node.name = std::move(name);
  auto types = op->InferTypes(node.params, InputInfos(node));
  if (!types.ok())
    return absl::Status(types.status().code(),
                        absl::StrCat("node '", node.name, "' (", op->name(), "): ", types.status().message()));
  if (!output_names.empty() && output_names.size() != types->size())
    return absl::InvalidArgumentError(absl::StrCat("node '", node.name, "' (", op->name(), ") has ", types->size(),
                                                   " outputs, ", output_names.size(), " names given"));
  RETURN_IF_ERROR(CheckNewNames(output_names));
  for (const OutputType& type : *types)
    RETURN_IF_ERROR(CheckCountable(absl::StrCat("an output of node '", node.name, "' (", op->name(), ")"), type.shape));
  for (size_t i = 0; i < types->size(); ++i)
    node.outputs.push_back(
        NewOutput(i < output_names.size() && !output_names[i].empty() ? output_names[i] : UniqueName(node.name),
                  (*types)[i], num_nodes(), static_cast<int>(i)));
  nodes_.push_back(std::move(node));
  return nodes_.back().outputs;
}

ValueId Graph::NewOutput(std::string name, const OutputType& type, NodeId producer, int index) {
  Value v;
  v.name = std::move(name);
  v.dtype = type.dtype;
  v.shape = type.shape;
  v.shape_known = type.shape_known;
  v.producer = producer;
  v.producer_output = index;
  ValueId id = num_values();
  by_name_[v.name] = id;
  values_.push_back(std::move(v));
  return id;
}

absl::StatusOr<std::vector<ValueId>> Graph::AddOpaqueNode(std::shared_ptr<const onnx::NodeProto> proto,
                                                          std::vector<ValueId> inputs,
                                                          std::vector<std::string> output_names,
                                                          std::vector<OutputType> output_types) {
  const OpDef* opaque = OpRegistry::Global().Opaque();
  if (opaque == nullptr) return absl::InternalError("opaque operator not registered");
  if (output_names.size() != output_types.size())
    return absl::InvalidArgumentError("opaque node: output names and types differ in number");
  RETURN_IF_ERROR(CheckOpaqueOutputNames(*proto, output_names));
  RETURN_IF_ERROR(CheckNewNames(output_names));
  for (size_t i = 0; i < output_names.size(); ++i)
    RETURN_IF_ERROR(CheckCountable(absl::StrCat("output '", output_names[i], "'"), output_types[i].shape));
  Node node;
  node.op = opaque;
  node.name = proto->name();
  node.inputs = std::move(inputs);
  node.onnx_node = std::move(proto);
  for (size_t i = 0; i < output_names.size(); ++i)
    node.outputs.push_back(NewOutput(output_names[i], output_types[i], num_nodes(), static_cast<int>(i)));
  nodes_.push_back(std::move(node));
  return nodes_.back().outputs;
}

absl::Status Graph::AddOutput(ValueId v) {
  if (v < 0 || v >= num_values()) return absl::InvalidArgumentError("graph output is not a value");
  outputs_.push_back(v);
  return absl::OkStatus();
}

absl::Status Graph::MarkWeightAsInput(ValueId v) {
  if (v < 0 || v >= num_values() || !values_[v].is_weight())
    return absl::InvalidArgumentError("only a weight can be marked as an input");
  if (!values_[v].is_graph_input) {
    values_[v].is_graph_input = true;
    inputs_.push_back(v);
  }
  return absl::OkStatus();
}

std::vector<ValueId> Graph::weights() const {
  std::vector<ValueId> w;
  for (ValueId i = 0; i < num_values(); ++i)
    if (values_[i].is_weight()) w.push_back(i);
  return w;
}

ValueId Graph::FindValue(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? kNoValue : it->second;
}

UseIndex::UseIndex(const Graph& graph)
    : readers_(graph.num_values()), reads_(graph.num_values(), 0), is_graph_output_(graph.num_values(), false) {
  for (NodeId n = 0; n < graph.num_nodes(); ++n)
    for (ValueId v : graph.node(n).inputs) {
      if (v == kNoValue) continue;
      ++reads_[v];
      if (readers_[v].empty() || readers_[v].back() != n) readers_[v].push_back(n);
    }
  for (ValueId v : graph.outputs()) is_graph_output_[v] = true;
}

NodeId UseIndex::SoleReader(ValueId v) const {
  return !is_graph_output_[v] && reads_[v] == 1 ? readers_[v][0] : kNoNode;
}

absl::StatusOr<std::vector<NodeId>> Graph::TopologicalOrder() const {
  // Kahn's algorithm; a min-heap on node ids keeps the order deterministic. The readers
  // of each value are kept in one flat array (the search orders every candidate graph).
  std::vector<int> pending(nodes_.size(), 0);
  std::vector<int> first_reader(values_.size() + 1, 0);
  for (const Node& node : nodes_)
    for (ValueId v : node.inputs)
      if (v != kNoValue) ++first_reader[v + 1];
  for (size_t v = 0; v < values_.size(); ++v) first_reader[v + 1] += first_reader[v];
  std::vector<NodeId> readers(first_reader.back());
  std::vector<int> filled(first_reader.begin(), first_reader.end() - 1);
  for (NodeId n = 0; n < num_nodes(); ++n)
    for (ValueId v : nodes_[n].inputs) {
      if (v == kNoValue) continue;
      readers[filled[v]++] = n;  // once per use: a node reading a value twice waits for it twice
      if (values_[v].producer != kNoNode) ++pending[n];
    }
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (NodeId n = 0; n < num_nodes(); ++n)
    if (pending[n] == 0) ready.push(n);
  std::vector<NodeId> order;
  order.reserve(nodes_.size());
  while (!ready.empty()) {
    NodeId n = ready.top();
    ready.pop();
    order.push_back(n);
    for (ValueId out : nodes_[n].outputs) {
      for (int r = first_reader[out]; r < first_reader[out + 1]; ++r)
        if (--pending[readers[r]] == 0) ready.push(readers[r]);
    }
  }
  if (order.size() != nodes_.size()) {
    for (NodeId n = 0; n < num_nodes(); ++n)
      if (pending[n] > 0)
        return absl::InvalidArgumentError(absl::StrCat("graph has a cycle through node '", nodes_[n].name, "'"));
  }
  return order;
}

absl::Status Graph::Validate() const {
  for (NodeId n = 0; n < num_nodes(); ++n) {
    const Node& node = nodes_[n];
    for (ValueId v : node.inputs)
      if (v != kNoValue && (v < 0 || v >= num_values()))
        return absl::InvalidArgumentError(absl::StrCat("node '", node.name, "' reads an unknown value"));
    for (ValueId v : node.outputs)
      if (v < 0 || v >= num_values() || values_[v].producer != n)
        return absl::InternalError(absl::StrCat("node '", node.name, "' output bookkeeping is broken"));
  }
  RETURN_IF_ERROR(TopologicalOrder().status());
  if (outputs_.empty()) return absl::InvalidArgumentError("graph has no outputs");
  return absl::OkStatus();
}

int64_t Graph::ApproxBytes() const {
  // A map entry or hash slot, with its bookkeeping; a heap string's characters.
  constexpr int64_t kEntry = 64;
  auto text = [](const std::string& s) { return static_cast<int64_t>(s.capacity()); };
  int64_t bytes = sizeof(Graph);
  for (const Value& v : values_)
    bytes += sizeof(Value) + text(v.name) + static_cast<int64_t>(v.shape.capacity() * sizeof(int64_t));
  for (const Node& n : nodes_)
    bytes += sizeof(Node) + text(n.name) + static_cast<int64_t>(n.params.entries().size()) * kEntry +
             static_cast<int64_t>((n.inputs.capacity() + n.outputs.capacity()) * sizeof(ValueId));
  return bytes + static_cast<int64_t>(by_name_.capacity()) * kEntry;
}

uint64_t Graph::StructuralHash() const {
  auto order = TopologicalOrder();
  if (!order.ok()) return 0;
  std::vector<uint64_t> h(values_.size(), 0);
  for (size_t i = 0; i < inputs_.size(); ++i)
    h[inputs_[i]] =
        absl::HashOf(absl::string_view("input"), i, static_cast<int>(values_[inputs_[i]].dtype),
                     std::vector<int64_t>(values_[inputs_[i]].shape.begin(), values_[inputs_[i]].shape.end()));
  for (ValueId v = 0; v < num_values(); ++v)
    if (values_[v].is_constant()) h[v] = absl::HashOf(absl::string_view("weight"), values_[v].data->ContentHash());
  uint64_t node_sum = 0;  // a symmetric sum over all nodes, so dead ends count too
  for (NodeId n : *order) {
    const Node& node = nodes_[n];
    uint64_t nh = absl::HashOf(node.op->name(), node.params.Hash());
    if (node.onnx_node) nh = absl::HashOf(nh, node.onnx_node->SerializeAsString());
    for (ValueId in : node.inputs) nh = absl::HashOf(nh, in == kNoValue ? 0 : h[in]);
    for (size_t i = 0; i < node.outputs.size(); ++i) h[node.outputs[i]] = absl::HashOf(nh, i);
    node_sum += nh;
  }
  uint64_t g = absl::HashOf(node_sum);
  for (ValueId out : outputs_) g = absl::HashOf(g, h[out]);
  return g;
}

std::string Graph::DebugString() const {
  std::string s;
  auto describe = [&](ValueId v) {
    if (v == kNoValue) return std::string("<absent>");
    const Value& val = values_[v];
    return absl::StrCat(val.name, ":", DataTypeName(val.dtype), val.shape_known ? ShapeToString(val.shape) : "[?]");
  };
  for (ValueId v : inputs_) absl::StrAppend(&s, "input ", describe(v), "\n");
  for (ValueId v = 0; v < num_values(); ++v)
    if (values_[v].is_weight())
      absl::StrAppend(&s, "weight ", describe(v), values_[v].is_graph_input ? " (also input)" : "", " #",
                      values_[v].data->ContentHash(), "\n");
  auto order = TopologicalOrder();
  std::vector<NodeId> nodes;
  if (order.ok())
    nodes = *order;
  else
    for (NodeId n = 0; n < num_nodes(); ++n) nodes.push_back(n);
  for (NodeId n : nodes) {
    const Node& node = nodes_[n];
    std::vector<std::string> ins, outs;
    for (ValueId v : node.inputs) ins.push_back(describe(v));
    for (ValueId v : node.outputs) outs.push_back(describe(v));
    absl::StrAppend(&s, "node ", node.name, " = ", node.op->name(),
                    node.onnx_node ? absl::StrCat("<", node.onnx_node->op_type(), ">") : "", "{",
                    node.params.ToString(), "}(", absl::StrJoin(ins, ", "), ") -> ", absl::StrJoin(outs, ", "), "\n");
  }
  for (ValueId v : outputs_) absl::StrAppend(&s, "output ", describe(v), "\n");
  return s;
}

}  // namespace taso
