#include "pipeline/value_numbering.h"

#include "taso/ir/status_macros.h"
#include "taso/passes/fold.h"

namespace taso::pipeline {

namespace {

// Results past this many elements are numbered by how they are computed, not computed.
constexpr int64_t kMaxFoldedElements = int64_t{1} << 24;

// A library node's outputs where every input it reads is known ahead of time (`known`, per
// value), computed as FoldWeights computes them: the same result in a folded model is a
// weight. Empty where that is not so (an input not known, a result not of float32).
std::vector<TensorDataPtr> Folded(const Graph& graph, const Node& node, const std::vector<TensorDataPtr>& known) {
  int64_t elements = 0;
  for (ValueId v : node.outputs) {
    const Value& out = graph.value(v);
    if (out.dtype != DataType::kFloat32 || !out.shape_known) return {};
    elements += NumElements(out.shape);
  }
  if (elements > kMaxFoldedElements) return {};
  // Every input known first: a node that also reads a fed value computes nothing here.
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ValueId v = node.inputs[i];
    const bool needed = v != kNoValue && !node.op->reads_only_shape_of(static_cast<int>(i));
    if (needed && !(known[v] && known[v]->dtype() == DataType::kFloat32)) return {};
  }
  absl::StatusOr<std::vector<Tensor<float>>> outs = RunOnKnownInputs(graph, node, [&](ValueId v) -> KernelInput<float> {
    if (known[v] && known[v]->dtype() == DataType::kFloat32) return known[v]->float_view();
    return nullptr;
  });
  if (!outs.ok() || outs->size() != node.outputs.size()) return {};
  std::vector<TensorDataPtr> results;
  for (Tensor<float>& t : *outs) results.push_back(TensorData::Float(t.shape, std::move(t.data)));
  return results;
}

}  // namespace

absl::StatusOr<std::vector<uint32_t>> ValueNumbering::Number(const Graph& graph) {
  ASSIGN_OR_RETURN(const std::vector<NodeId> order, graph.TopologicalOrder());
  std::vector<uint32_t> numbers(graph.num_values(), 0);
  std::vector<TensorDataPtr> known(graph.num_values());  // values known ahead of time
  for (ValueId v = 0; v < graph.num_values(); ++v) {
    const Value& value = graph.value(v);
    if (value.is_constant()) {
      known[v] = value.data;
      numbers[v] = DataNumber(value.data);
    } else if (value.producer == kNoNode) {
      numbers[v] = FedNumber(graph, v);
    }
  }
  for (NodeId n : order) {
    const Node& node = graph.node(n);
    if (node.op->is_opaque()) {
      for (ValueId v : node.outputs) numbers[v] = FedNumber(graph, v);
      continue;
    }
    std::vector<TensorDataPtr> results;
    if (TensorDataPtr constant = node.op->ConstantOutput(node.params))
      results = {std::move(constant)};
    else
      results = Folded(graph, node, known);
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const ValueId v = node.outputs[i];
      if (i < results.size()) known[v] = results[i];
      numbers[v] = known[v] ? DataNumber(known[v]) : ComputedNumber(graph, node, static_cast<int>(i), numbers);
    }
  }
  return numbers;
}

uint32_t ValueNumbering::DataNumber(const TensorDataPtr& data) {
  if (auto it = data_by_address_.find(data.get()); it != data_by_address_.end()) return it->second.second;
  std::vector<std::pair<TensorDataPtr, uint32_t>>& alike = data_by_hash_[data->ContentHash()];
  uint32_t number = 0;
  for (const auto& [other, n] : alike)
    if (other->SameContent(*data)) number = n;
  if (number == 0) {
    number = Next();
    alike.emplace_back(data, number);
  }
  data_by_address_[data.get()] = {data, number};
  return number;
}

uint32_t ValueNumbering::FedNumber(const Graph& graph, ValueId v) {
  const Value& value = graph.value(v);
  FedKey key{value.producer != kNoNode, value.name, value.dtype, value.shape_known ? value.shape : Shape{-1},
             value.data ? DataNumber(value.data) : 0};
  auto [it, added] = fed_.try_emplace(std::move(key), 0);
  if (added) it->second = Next();
  return it->second;
}

uint32_t ValueNumbering::ComputedNumber(const Graph& graph, const Node& node, int output,
                                        const std::vector<uint32_t>& numbers) {
  const Value& out = graph.value(node.outputs[output]);
  ComputedKey key{node.op, node.params, {}, output, out.dtype, out.shape_known ? out.shape : Shape{-1}};
  for (ValueId in : node.inputs) key.inputs.push_back(in == kNoValue ? 0 : numbers[in]);
  auto [it, added] = computed_.try_emplace(std::move(key), 0);
  if (added) it->second = Next();
  return it->second;
}

}  // namespace taso::pipeline
