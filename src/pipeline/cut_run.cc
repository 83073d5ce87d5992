#include "pipeline/cut_run.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "onnx/onnx_pb.h"
#include "taso/ir/rng.h"
#include "taso/ir/status_macros.h"

namespace taso::pipeline {

namespace {

std::string OpaqueNodeKey(const Graph& graph, const Node& node) {
  return node.outputs.empty() ? node.name : graph.value(node.outputs[0]).name;
}

std::string OutputKey(const Graph& graph, ValueId v) { return absl::StrCat("output '", graph.value(v).name, "'"); }

std::string OpaqueInputKey(const std::string& node_key, size_t i) {
  return absl::StrCat("input ", i, " of opaque node '", node_key, "'");
}

// Where a value the run does not compute comes from: a constant's content, else its name
// (a run-time input or an opaque node's output, the same in both graphs).
std::string SourceOf(const Graph& graph, ValueId v) {
  if (const TensorData* data = graph.ConstantData(v))
    return absl::StrFormat("constant %s %s #%016x", DataTypeName(data->dtype()), ShapeToString(data->shape()),
                           data->ContentHash());
  return absl::StrCat("value '", graph.value(v).name, "'");
}

// One run: the values (by id), which are there, and what is recorded.
class CutRunner {
 public:
  CutRunner(const Graph& graph, const RunPart& part)
      : graph_(graph), part_(part), values_(graph.num_values()), ready_(graph.num_values(), false) {}

  absl::Status Feed(const TensorMap& inputs, const TensorMap& opaque_outputs) {
    RETURN_IF_ERROR(FeedInputs(inputs));
    FeedWeights();
    RETURN_IF_ERROR(FeedOpaqueOutputs(opaque_outputs));
    for (const auto& [id, tensor] : part_.given) Set(id, *tensor);
    return absl::OkStatus();
  }

  absl::StatusOr<CutRun> Run() && {
    ASSIGN_OR_RETURN(const std::vector<NodeId> order, graph_.TopologicalOrder());
    CountReads(order);
    for (NodeId n : order) {
      const Node& node = graph_.node(n);
      if (node.op->is_opaque()) {
        if (part_.record) RecordInputs(node);
      } else if (part_.nodes.empty() || part_.nodes[n]) {
        RETURN_IF_ERROR(CheckInputsThere(node));
        RETURN_IF_ERROR(RunReferenceNode(graph_, node, values_));
        ++result_.nodes_run;
        for (ValueId v : node.outputs) ready_[v] = Computable(graph_.value(v));
      }
      FreeAfterLastRead(node);
    }
    if (part_.record)
      for (ValueId v : graph_.outputs()) Record(OutputKey(graph_, v), v);
    for (ValueId v : part_.keep)
      if (ready_[v])
        result_.kept[v] =
            values_[v].data.empty() ? CopyOf(ReferenceOperand(graph_, v, values_)) : std::move(values_[v]);
    return std::move(result_);
  }

 private:
  // The float32 run-time inputs; the others are read by opaque nodes only.
  absl::Status FeedInputs(const TensorMap& inputs) {
    for (ValueId id : graph_.inputs()) {
      if (graph_.value(id).dtype != DataType::kFloat32) continue;
      ASSIGN_OR_RETURN(const Tensor<float>* given, GivenInput(graph_, id, inputs));
      if (given) Set(id, *given);
    }
    return absl::OkStatus();
  }

  // The float32 weights not given as inputs, which kernels read in place
  // (ReferenceOperand); kernels read the others as constants.
  void FeedWeights() {
    for (ValueId id : graph_.weights())
      if (graph_.value(id).data->dtype() == DataType::kFloat32) ready_[id] = true;
  }

  absl::Status FeedOpaqueOutputs(const TensorMap& opaque_outputs) {
    for (ValueId id = 0; id < graph_.num_values(); ++id) {
      const Value& v = graph_.value(id);
      auto it = opaque_outputs.find(v.name);
      if (it == opaque_outputs.end() || v.producer == kNoNode || !graph_.node(v.producer).op->is_opaque()) continue;
      if (it->second.shape != v.shape)
        return absl::InternalError(absl::StrCat("the value fed for '", v.name, "' has shape ",
                                                ShapeToString(it->second.shape), ", not ", ShapeToString(v.shape)));
      Set(id, it->second);
    }
    return absl::OkStatus();
  }

  void Set(ValueId id, Tensor<float> t) {
    values_[id] = std::move(t);
    ready_[id] = true;
  }

  void CountReads(const std::vector<NodeId>& order) {
    reads_left_.assign(graph_.num_values(), 0);
    for (NodeId n : order)
      for (ValueId v : graph_.node(n).inputs)
        if (v != kNoValue) ++reads_left_[v];
    for (ValueId v : graph_.outputs()) ++reads_left_[v];  // read at the end
    for (ValueId v : part_.keep) ++reads_left_[v];
  }

  // Computed values go once their last reader has run (weights and inputs stay).
  void FreeAfterLastRead(const Node& node) {
    for (ValueId v : node.inputs)
      if (v != kNoValue && --reads_left_[v] == 0 && graph_.value(v).producer != kNoNode)
        values_[v].data = std::vector<float>();
  }

  void Record(const std::string& key, ValueId v) {
    if (part_.alike && part_.alike_keys.contains(key)) {
      if (auto t = part_.alike->tensors.find(key); t != part_.alike->tensors.end()) result_.tensors[key] = t->second;
      if (auto s = part_.alike->sources.find(key); s != part_.alike->sources.end()) result_.sources[key] = s->second;
      return;
    }
    if (ready_[v] && Computable(graph_.value(v)))
      result_.tensors[key] = CopyOf(ReferenceOperand(graph_, v, values_));
    else
      result_.sources[key] = SourceOf(graph_, v);
  }

  void RecordInputs(const Node& node) {
    const std::string key = OpaqueNodeKey(graph_, node);
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (node.inputs[i] != kNoValue) Record(OpaqueInputKey(key, i), node.inputs[i]);
  }

  // A library node's float inputs must have been computed or fed; the others are
  // constants, which kernels read as such.
  absl::Status CheckInputsThere(const Node& node) const {
    for (ValueId v : node.inputs) {
      if (v == kNoValue || ready_[v] || (graph_.value(v).dtype != DataType::kFloat32 && graph_.ConstantData(v)))
        continue;
      return absl::FailedPreconditionError(absl::StrCat(
          "the self-check cannot cover node '", node.name, "': it reads '", graph_.value(v).name, "', whose ",
          Computable(graph_.value(v)) ? "value" : "shape or element type", " is unknown here"));
    }
    return absl::OkStatus();
  }

  const Graph& graph_;
  const RunPart& part_;
  std::vector<Tensor<float>> values_;
  std::vector<bool> ready_;
  std::vector<int> reads_left_;  // by value: reads by nodes not yet run, and by the graph outputs
  CutRun result_;
};

}  // namespace

bool Computable(const Value& v) { return v.dtype == DataType::kFloat32 && v.shape_known; }

std::vector<std::pair<std::string, ValueId>> CheckPoints(const Graph& graph) {
  std::vector<std::pair<std::string, ValueId>> points;
  for (NodeId n = 0; n < graph.num_nodes(); ++n) {
    const Node& node = graph.node(n);
    if (!node.op->is_opaque()) continue;
    const std::string key = OpaqueNodeKey(graph, node);
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (node.inputs[i] != kNoValue) points.emplace_back(OpaqueInputKey(key, i), node.inputs[i]);
  }
  for (ValueId v : graph.outputs()) points.emplace_back(OutputKey(graph, v), v);
  return points;
}

std::map<std::string, std::string> OpaqueNodes(const Graph& graph) {
  std::map<std::string, std::string> nodes;
  for (NodeId n = 0; n < graph.num_nodes(); ++n)
    if (const Node& node = graph.node(n); node.op->is_opaque())
      nodes[OpaqueNodeKey(graph, node)] = node.onnx_node ? node.onnx_node->op_type() : "?";
  return nodes;
}

absl::StatusOr<TensorMap> RandomOpaqueOutputs(const Graph& graph, uint64_t seed, double scale) {
  ASSIGN_OR_RETURN(const std::vector<NodeId> order, graph.TopologicalOrder());
  Rng rng(seed ^ 0x6f70617175650000ull);  // another stream than the graph inputs'
  TensorMap fed;
  for (NodeId n : order) {
    const Node& node = graph.node(n);
    if (!node.op->is_opaque()) continue;
    for (ValueId id : node.outputs) {
      const Value& v = graph.value(id);
      if (!Computable(v)) continue;
      Tensor<float> t(v.shape);
      for (float& x : t.data) x = static_cast<float>(rng.Uniform(-scale, scale));
      fed[v.name] = std::move(t);
    }
  }
  return fed;
}

absl::StatusOr<CutRun> RunAroundOpaque(const Graph& graph, const TensorMap& inputs, const TensorMap& opaque_outputs,
                                       const RunPart& part) {
  CutRunner runner(graph, part);
  RETURN_IF_ERROR(runner.Feed(inputs, opaque_outputs));
  return std::move(runner).Run();
}

}  // namespace taso::pipeline
