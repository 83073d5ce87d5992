#include "taso/fold.h"

#include "graph_copy.h"
#include "taso/cost.h"
#include "taso/executor.h"
#include "taso/status_macros.h"

namespace taso {
namespace {

// A weight of its own with the same data (the original belongs to a node's parameters).
TensorDataPtr Copy(const TensorData& d) {
  switch (d.dtype()) {
    case DataType::kFloat32:
      return TensorData::Float(d.shape(), std::vector<float>(d.floats().begin(), d.floats().end()));
    case DataType::kInt64:
      return TensorData::Int64(d.shape(), std::vector<int64_t>(d.ints().begin(), d.ints().end()));
    default:
      return TensorData::Raw(d.dtype(), d.shape(), d.raw_proto());
  }
}

}  // namespace

absl::StatusOr<Graph> FoldWeights(const Graph& graph) {
  const std::vector<bool> weight_only = FindWeightOnly(graph).nodes;
  ASSIGN_OR_RETURN(std::vector<NodeId> order, graph.TopologicalOrder());
  GraphCopy copy(graph);
  RETURN_IF_ERROR(copy.CopyInputs());
  std::vector<std::optional<Tensor<float>>> computed(graph.num_values());
  auto value_of = [&](ValueId v) -> absl::StatusOr<const Tensor<float>*> {
    if (!computed[v]) {
      const TensorData* data = graph.ConstantData(v);
      if (data == nullptr || data->dtype() != DataType::kFloat32)
        return absl::FailedPreconditionError("a folded operator reads a non-float constant");
      computed[v] = Tensor<float>(data->shape(), std::vector<float>(data->floats().begin(), data->floats().end()));
    }
    return &*computed[v];
  };
  for (NodeId n : order) {
    if (!weight_only[n]) {
      RETURN_IF_ERROR(copy.CopyNode(n));
      continue;
    }
    const Node& node = graph.node(n);
    // A constant known as it is (an ONNX Constant, of any element type) becomes a weight
    // holding its data; other non-float results stay computed by their node.
    bool known = true, floats = true;
    for (ValueId v : node.outputs) {
      known &= graph.ConstantData(v) != nullptr;
      floats &= graph.value(v).dtype == DataType::kFloat32;
    }
    if (known) {
      for (ValueId v : node.outputs) {
        ASSIGN_OR_RETURN(ValueId w, copy.graph().AddWeight(graph.value(v).name, Copy(*graph.ConstantData(v))));
        copy.Replace(v, w);
      }
      continue;
    }
    if (!floats) {
      RETURN_IF_ERROR(copy.CopyNode(n));
      continue;
    }
    std::vector<const Tensor<float>*> inputs;
    std::vector<Tensor<float>> shaped;  // what an operator reading only shapes is given
    shaped.reserve(node.inputs.size());
    for (ValueId v : node.inputs) {
      if (v == kNoValue) {
        inputs.push_back(nullptr);
      } else if (node.op->reads_only_shapes()) {
        inputs.push_back(&shaped.emplace_back(graph.value(v).shape));
      } else {
        ASSIGN_OR_RETURN(const Tensor<float>* t, value_of(v));
        inputs.push_back(t);
      }
    }
    ASSIGN_OR_RETURN(std::vector<Tensor<float>> outs, RunOp<float>(*node.op, node.params, inputs));
    for (size_t k = 0; k < outs.size(); ++k) {
      const ValueId v = node.outputs[k];
      ASSIGN_OR_RETURN(ValueId w, copy.graph().AddWeight(graph.value(v).name, TensorData::Float(outs[k].shape, outs[k].data)));
      copy.Replace(v, w);
      computed[v] = std::move(outs[k]);
    }
  }
  return copy.Finish();
}

}  // namespace taso
