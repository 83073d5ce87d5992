#include "taso/ir/executor.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "onnx/onnx_pb.h"
#include "taso/ir/rng.h"
#include "taso/ir/status_macros.h"

namespace taso {

absl::StatusOr<const Tensor<float>*> GivenInput(const Graph& graph, ValueId input, const TensorMap& inputs) {
  const Value& v = graph.value(input);
  auto it = inputs.find(v.name);
  if (it == inputs.end()) {
    if (v.is_weight()) return nullptr;  // an initializer with a default
    return absl::InvalidArgumentError(absl::StrCat("no data for input '", v.name, "'"));
  }
  if (it->second.shape != v.shape)
    return absl::InvalidArgumentError(absl::StrCat("input '", v.name, "' has shape ", ShapeToString(it->second.shape),
                                                   ", the graph expects ", ShapeToString(v.shape)));
  return &it->second;
}

TensorView<float> ReferenceOperand(const Graph& graph, ValueId v, const std::vector<Tensor<float>>& values) {
  const TensorData* weight = values[v].data.empty() ? graph.ConstantData(v) : nullptr;
  return weight && weight->dtype() == DataType::kFloat32 ? weight->float_view() : TensorView<float>(values[v]);
}

absl::Status RunReferenceNode(const Graph& graph, const Node& node, std::vector<Tensor<float>>& values) {
  KernelArgs<float> args;
  for (ValueId v : node.inputs) {
    const bool numeric = v != kNoValue && graph.value(v).dtype == DataType::kFloat32;
    if (numeric)
      args.in.push_back(ReferenceOperand(graph, v, values));
    else
      args.in.push_back(nullptr);
    args.constant.push_back(graph.ConstantData(v));
  }
  for (ValueId v : node.outputs) {
    Tensor<float>& out = values[v];
    const Shape& shape = graph.value(v).shape;
    if (out.shape == shape && out.numel() == NumElements(shape))  // a default tensor is shape [] with no element
      std::fill(out.data.begin(), out.data.end(), 0.0f);
    else
      out = Tensor<float>(shape);
    args.out.push_back(&out);
  }
  absl::Status s = node.op->semantics().RunFloat(node.params, args);
  if (!s.ok())
    return absl::Status(s.code(), absl::StrCat("node '", node.name, "' (", node.op->name(), "): ", s.message()));
  return absl::OkStatus();
}

absl::StatusOr<TensorMap> RunReference(const Graph& graph, const TensorMap& inputs) {
  ASSIGN_OR_RETURN(std::vector<NodeId> order, graph.TopologicalOrder());
  std::vector<Tensor<float>> values(graph.num_values());
  // The inputs given; weights nothing fed are read in place (ReferenceOperand).
  for (ValueId id : graph.inputs()) {
    ASSIGN_OR_RETURN(const Tensor<float>* given, GivenInput(graph, id, inputs));
    if (given) values[id] = *given;
  }

  // Free each intermediate tensor after its last reader.
  std::vector<int> readers_left(graph.num_values(), 0);
  for (NodeId n : order)
    for (ValueId v : graph.node(n).inputs)
      if (v != kNoValue) ++readers_left[v];
  std::vector<bool> keep(graph.num_values(), false);
  for (ValueId v : graph.outputs()) keep[v] = true;

  for (NodeId n : order) {
    const Node& node = graph.node(n);
    if (node.op->is_opaque())
      return absl::UnimplementedError(absl::StrCat("cannot execute node '", node.name, "': ONNX operator ",
                                                   node.onnx_node ? node.onnx_node->op_type() : "?",
                                                   " is not in the operator library"));
    RETURN_IF_ERROR(RunReferenceNode(graph, node, values));
    for (ValueId v : node.inputs)
      if (v != kNoValue && --readers_left[v] == 0 && !keep[v] && graph.value(v).producer != kNoNode)
        values[v] = Tensor<float>();
  }

  TensorMap out;
  for (ValueId v : graph.outputs()) out[graph.value(v).name] = CopyOf(ReferenceOperand(graph, v, values));
  return out;
}

template <typename S>
absl::StatusOr<std::vector<Tensor<S>>> RunOp(const OpDef& op, const Params& params,
                                             const std::vector<KernelInput<S>>& inputs) {
  std::vector<InputInfo> infos;
  for (const KernelInput<S>& t : inputs) {
    InputInfo info;
    info.present = static_cast<bool>(t);
    if (t) info.shape = t->shape;
    infos.push_back(info);
  }
  ASSIGN_OR_RETURN(std::vector<OutputType> types, op.InferTypes(params, infos));
  std::vector<Tensor<S>> outputs;
  for (const OutputType& t : types) outputs.emplace_back(t.shape);
  KernelArgs<S> args;
  args.in = inputs;
  args.constant.assign(inputs.size(), nullptr);
  for (Tensor<S>& t : outputs) args.out.push_back(&t);
  if constexpr (std::is_same_v<S, float>)
    RETURN_IF_ERROR(op.RunFloat(params, args));
  else
    RETURN_IF_ERROR(op.RunUint32(params, args));
  return outputs;
}

template absl::StatusOr<std::vector<Tensor<float>>> RunOp(const OpDef&, const Params&,
                                                          const std::vector<KernelInput<float>>&);
template absl::StatusOr<std::vector<Tensor<uint32_t>>> RunOp(const OpDef&, const Params&,
                                                             const std::vector<KernelInput<uint32_t>>&);

TensorMap RandomInputs(const Graph& graph, uint64_t seed, double scale) {
  Rng rng(seed);
  TensorMap m;
  for (ValueId id : graph.inputs()) {
    const Value& v = graph.value(id);
    if (v.dtype != DataType::kFloat32) continue;  // an initializer listed as an input gets one too
    Tensor<float> t(v.shape);
    for (float& x : t.data) x = static_cast<float>(rng.Uniform(-scale, scale));
    m[v.name] = std::move(t);
  }
  return m;
}

double MaxAbsDifference(const TensorMap& a, const TensorMap& b) {
  const double inf = std::numeric_limits<double>::infinity();
  if (a.size() != b.size()) return inf;
  double worst = 0;
  for (const auto& [name, ta] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second.shape != ta.shape) return inf;
    for (size_t i = 0; i < ta.data.size(); ++i) {
      double d = std::fabs(static_cast<double>(ta.data[i]) - it->second.data[i]);
      if (std::isnan(d)) return inf;
      worst = std::max(worst, d);
    }
  }
  return worst;
}

double RelativeDifference(const TensorMap& expected, const TensorMap& got) {
  double scale = 1;
  for (const auto& [name, t] : expected)
    for (float v : t.data) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  return MaxAbsDifference(expected, got) / scale;
}

}  // namespace taso
