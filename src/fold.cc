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

// Copies a graph with each weight-only node replaced by weights holding its results;
// a result nothing reads (and no output) is dropped.
class WeightFolder {
 public:
  explicit WeightFolder(const Graph& graph)
      : g_(graph), weight_only_(FindWeightOnly(graph).nodes), copy_(graph), computed_(graph.num_values()) {}

  absl::StatusOr<Graph> Run() {
    ASSIGN_OR_RETURN(std::vector<NodeId> order, g_.TopologicalOrder());
    RETURN_IF_ERROR(copy_.CopyInputs());
    for (NodeId n : order) RETURN_IF_ERROR(weight_only_[n] ? Fold(n) : copy_.CopyNode(n));
    return copy_.Finish();
  }

 private:
  // A constant known as it is (an ONNX Constant, of any element type) becomes a weight
  // holding its data; a float result is computed; other results stay computed by
  // their node.
  absl::Status Fold(NodeId n) {
    const Node& node = g_.node(n);
    bool known = true, floats = true;
    for (ValueId v : node.outputs) {
      known &= g_.ConstantData(v) != nullptr;
      floats &= g_.value(v).dtype == DataType::kFloat32;
    }
    if (known) return KeepConstants(node);
    if (!floats) return copy_.CopyNode(n);
    return Compute(node);
  }

  absl::Status KeepConstants(const Node& node) {
    for (ValueId v : node.outputs) copy_.ReplaceByWeight(v, Copy(*g_.ConstantData(v)));
    return absl::OkStatus();
  }

  // Runs the node's reference kernel and adds its results as weights.
  absl::Status Compute(const Node& node) {
    std::vector<const Tensor<float>*> inputs;
    std::vector<Tensor<float>> shaped;  // what an operator reading only shapes is given
    shaped.reserve(node.inputs.size());
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId v = node.inputs[i];
      if (v == kNoValue) {
        inputs.push_back(nullptr);
      } else if (node.op->reads_only_shape_of(static_cast<int>(i))) {
        inputs.push_back(&shaped.emplace_back(g_.value(v).shape));
      } else {
        ASSIGN_OR_RETURN(const Tensor<float>* t, ValueOf(v));
        inputs.push_back(t);
      }
    }
    ASSIGN_OR_RETURN(std::vector<Tensor<float>> outs, RunOp<float>(*node.op, node.params, inputs));
    for (size_t k = 0; k < outs.size(); ++k) {
      const ValueId v = node.outputs[k];
      copy_.ReplaceByWeight(v, TensorData::Float(outs[k].shape, outs[k].data));
      computed_[v] = std::move(outs[k]);
    }
    return absl::OkStatus();
  }

  // The value of a float constant or of a folded node's output.
  absl::StatusOr<const Tensor<float>*> ValueOf(ValueId v) {
    if (!computed_[v]) {
      const TensorData* data = g_.ConstantData(v);
      if (data == nullptr || data->dtype() != DataType::kFloat32)
        return absl::FailedPreconditionError("a folded operator reads a non-float constant");
      computed_[v] = Tensor<float>(data->shape(), std::vector<float>(data->floats().begin(), data->floats().end()));
    }
    return &*computed_[v];
  }

  const Graph& g_;
  const std::vector<bool> weight_only_;  // per node
  GraphCopy copy_;
  std::vector<std::optional<Tensor<float>>> computed_;  // per value: its value once known
};

}  // namespace

absl::StatusOr<Graph> FoldWeights(const Graph& graph) { return WeightFolder(graph).Run(); }

}  // namespace taso
