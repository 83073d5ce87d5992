#include "taso/passes/fold.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "taso/ir/executor.h"
#include "taso/ir/graph_copy.h"
#include "taso/ir/status_macros.h"
#include "taso/rewrite/cost.h"

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
// a result nothing reads (and no output) is dropped. Results that hold the same share one
// weight: those of nodes that compute the same (one operator and parameters on the same
// values, not computed twice), and any equal to a weight read or a result made before (an
// Identity's). A weight that several layers share, transposed in each, or read through an
// Identity per layer as PyTorch writes a shared weight, is written once, not per layer.
class WeightFolder {
 public:
  explicit WeightFolder(const Graph& graph)
      : g_(graph),
        weight_only_(FindWeightOnly(graph).nodes),
        copy_(graph),
        results_(graph.num_values()),
        same_as_(graph.num_values()) {
    for (ValueId v = 0; v < graph.num_values(); ++v) same_as_[v] = v;
  }

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
    if (const std::optional<NodeId> same = SameComputation(n)) return ShareResults(node, g_.node(*same));
    return Compute(node);
  }

  // A node folded before that computes what `n` does; else `n` is recorded as computing it.
  // Nodes whose results are graph outputs are left apart (each output keeps its name).
  std::optional<NodeId> SameComputation(NodeId n) {
    const Node& node = g_.node(n);
    for (ValueId v : node.outputs)
      if (IsGraphOutput(v)) return std::nullopt;
    std::vector<ValueId> inputs;
    for (ValueId v : node.inputs) inputs.push_back(v == kNoValue ? v : same_as_[v]);
    std::vector<NodeId>& alike = folded_by_hash_[absl::HashOf(node.op->name(), node.params.Hash(), inputs)];
    for (NodeId m : alike) {
      const Node& other = g_.node(m);
      std::vector<ValueId> other_inputs;
      for (ValueId v : other.inputs) other_inputs.push_back(v == kNoValue ? v : same_as_[v]);
      if (other.op == node.op && other.params == node.params && other_inputs == inputs) return m;
    }
    alike.push_back(n);
    return std::nullopt;
  }

  // `node`'s results are those `first` computed.
  absl::Status ShareResults(const Node& node, const Node& first) {
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const ValueId root = same_as_[first.outputs[k]];  // itself, or what it holds the same as
      same_as_[node.outputs[k]] = root;
      copy_.ReplaceBySameAs(node.outputs[k], root);
    }
    return absl::OkStatus();
  }

  absl::Status KeepConstants(const Node& node) {
    for (ValueId v : node.outputs) copy_.ReplaceByWeight(v, Copy(*g_.ConstantData(v)));
    return absl::OkStatus();
  }

  // Runs the node's reference kernel and adds its results as weights.
  absl::Status Compute(const Node& node) {
    ASSIGN_OR_RETURN(std::vector<Tensor<float>> outs,
                     RunOnKnownInputs(g_, node, [&](ValueId v) { return ValueOf(v); }));
    for (ValueId v : node.inputs)
      if (v != kNoValue && g_.value(v).is_weight()) Index(v, g_.value(v).data);
    for (size_t k = 0; k < outs.size(); ++k) {
      const ValueId v = node.outputs[k];
      TensorDataPtr data = TensorData::Float(outs[k].shape, std::move(outs[k].data));
      if (const std::optional<ValueId> same = HoldingTheSame(*data); same && !IsGraphOutput(v)) {
        same_as_[v] = *same;
        copy_.ReplaceBySameAs(v, *same);
        continue;
      }
      Index(v, data);
      results_[v] = data;
      copy_.ReplaceByWeight(v, std::move(data));
    }
    return absl::OkStatus();
  }

  bool IsGraphOutput(ValueId v) const {
    return std::find(g_.outputs().begin(), g_.outputs().end(), v) != g_.outputs().end();
  }

  // Records that old value `v` holds `data` (a weight read by a folded node, or a result).
  void Index(ValueId v, const TensorDataPtr& data) {
    std::vector<std::pair<ValueId, TensorDataPtr>>& alike = by_content_[data->ContentHash()];
    for (const auto& [u, known] : alike)
      if (u == v) return;
    alike.emplace_back(v, data);
  }

  // A value recorded as holding what `data` holds (a copy of a weight, say, as an Identity
  // makes one), if any.
  std::optional<ValueId> HoldingTheSame(const TensorData& data) const {
    const auto alike = by_content_.find(data.ContentHash());
    if (alike == by_content_.end()) return std::nullopt;
    for (const auto& [v, known] : alike->second)
      if (known->SameContent(data)) return v;
    return std::nullopt;
  }

  // The value of a float constant or of a folded node's output, read in place (null for
  // another element type).
  KernelInput<float> ValueOf(ValueId read) const {
    const ValueId v = same_as_[read];
    const TensorData* data = results_[v] ? results_[v].get() : g_.ConstantData(v);
    if (data && data->dtype() == DataType::kFloat32) return data->float_view();
    return nullptr;
  }

  const Graph& g_;
  const std::vector<bool> weight_only_;  // per node
  GraphCopy copy_;
  std::vector<TensorDataPtr> results_;  // per value: a folded node's result, once computed
  // Per value: the first value known to hold the same (itself if none), never one that
  // stands for another in turn.
  std::vector<ValueId> same_as_;
  absl::flat_hash_map<uint64_t, std::vector<NodeId>> folded_by_hash_;  // computed nodes, by what they compute
  // Weights read by folded nodes and their results, by content hash.
  absl::flat_hash_map<uint64_t, std::vector<std::pair<ValueId, TensorDataPtr>>> by_content_;
};

}  // namespace

absl::StatusOr<std::vector<Tensor<float>>> RunOnKnownInputs(
    const Graph& graph, const Node& node, const std::function<KernelInput<float>(ValueId)>& value_of) {
  std::vector<KernelInput<float>> inputs;
  std::vector<Tensor<float>> shaped;  // what an operator reading only shapes is given
  shaped.reserve(node.inputs.size());
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const ValueId v = node.inputs[i];
    if (v == kNoValue) {
      inputs.push_back(nullptr);
    } else if (node.op->reads_only_shape_of(static_cast<int>(i))) {
      inputs.push_back(&shaped.emplace_back(graph.value(v).shape));
    } else if (KernelInput<float> t = value_of(v)) {
      inputs.push_back(std::move(t));
    } else {
      return absl::FailedPreconditionError("a folded operator reads a non-float constant");
    }
  }
  return RunOp<float>(*node.op, node.params, inputs);
}

absl::StatusOr<Graph> FoldWeights(const Graph& graph) { return WeightFolder(graph).Run(); }

}  // namespace taso
