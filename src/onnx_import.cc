// ONNX import: ModelProto -> Graph. Every node is imported: as a library operator where
// one represents it exactly, otherwise as an opaque node that keeps its NodeProto.
#include <filesystem>
#include <fstream>
#include <queue>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx_tensor.h"
#include "taso/onnx_fold.h"
#include "taso/onnx_io.h"
#include "taso/status_macros.h"

namespace taso {
namespace {

absl::Status Invalid(absl::string_view msg) { return absl::InvalidArgumentError(msg); }

std::string Describe(const onnx::NodeProto& n) {
  return absl::StrCat("node '", n.name(), "' (", n.op_type(), ")");
}

// Element type and static shape of an ONNX value type; nullopt if not a static tensor.
std::optional<OutputType> StaticType(const onnx::TypeProto& t) {
  if (!t.has_tensor_type() || !t.tensor_type().has_shape()) return std::nullopt;
  OutputType out;
  out.dtype = static_cast<DataType>(t.tensor_type().elem_type());
  for (const auto& d : t.tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return std::nullopt;
    out.shape.push_back(d.dim_value());
  }
  return out;
}

// Names read inside a node's subgraphs that are not defined there: outer-scope captures.
void CollectCaptures(const onnx::GraphProto& g, absl::flat_hash_set<std::string>& defined,
                     std::vector<std::string>& captures) {
  for (const auto& i : g.input()) defined.insert(i.name());
  for (const auto& i : g.initializer()) defined.insert(i.name());
  for (const auto& n : g.node()) {
    for (const auto& in : n.input())
      if (!in.empty() && !defined.contains(in)) captures.push_back(in);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CollectCaptures(a.g(), defined, captures);
      for (const auto& sg : a.graphs()) CollectCaptures(sg, defined, captures);
    }
    for (const auto& out : n.output()) defined.insert(out);
  }
}

std::vector<std::string> SubgraphCaptures(const onnx::NodeProto& n) {
  std::vector<std::string> captures;
  for (const auto& a : n.attribute()) {
    absl::flat_hash_set<std::string> defined;
    if (a.has_g()) CollectCaptures(a.g(), defined, captures);
    for (const auto& sg : a.graphs()) CollectCaptures(sg, defined, captures);
  }
  return captures;
}

// Orders the nodes so each comes after the producers of what it reads; checks that every
// read name is defined somewhere, and that there is no cycle.
absl::StatusOr<std::vector<int>> SortNodes(const onnx::GraphProto& g,
                                           const absl::flat_hash_set<std::string>& outer) {
  absl::flat_hash_map<std::string, int> producer;
  for (int i = 0; i < g.node_size(); ++i)
    for (const auto& out : g.node(i).output()) {
      if (out.empty()) continue;
      if (outer.contains(out) || !producer.emplace(out, i).second)
        return Invalid(absl::StrCat("tensor '", out, "' is defined more than once (by ", Describe(g.node(i)), ")"));
    }
  std::vector<std::vector<int>> users(g.node_size());
  std::vector<int> pending(g.node_size(), 0);
  for (int i = 0; i < g.node_size(); ++i) {
    std::vector<std::string> reads(g.node(i).input().begin(), g.node(i).input().end());
    for (auto& c : SubgraphCaptures(g.node(i))) reads.push_back(std::move(c));
    for (const auto& in : reads) {
      if (in.empty() || outer.contains(in)) continue;
      auto it = producer.find(in);
      if (it == producer.end())
        return Invalid(absl::StrCat(Describe(g.node(i)), " reads '", in,
                                    "', which no node, graph input or initializer produces"));
      users[it->second].push_back(i);
      ++pending[i];
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;  // keeps the file's order where it can
  for (int i = 0; i < g.node_size(); ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[i])
      if (--pending[u] == 0) ready.push(u);
  }
  if (order.size() != static_cast<size_t>(g.node_size()))
    for (int i = 0; i < g.node_size(); ++i)
      if (pending[i] > 0) return Invalid(absl::StrCat("graph has a cycle through ", Describe(g.node(i))));
  return order;
}

// Tries the library operators that claim this node's type; nullptr op means opaque.
struct Chosen {
  const OpDef* op = nullptr;
  Params params;
};

absl::StatusOr<Chosen> ChooseOperator(const onnx::NodeProto& node, int opset, const std::vector<InputInfo>& inputs,
                                      int num_outputs) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return Chosen{};
  // Library operators compute on float32 data of known shape; integer shape arithmetic,
  // and whatever reads a tensor of unknown shape, stays opaque.
  if (!inputs.empty() && inputs[0].present && inputs[0].dtype != DataType::kFloat32) return Chosen{};
  for (const InputInfo& in : inputs)
    if (in.present && !in.shape_known) return Chosen{};
  for (const OpDef* op : OpRegistry::Global().ForOnnxType(node.op_type())) {
    OnnxImportNode view(node, opset, inputs);
    auto params = op->onnx().Import(view);
    if (!params.ok())
      return absl::Status(params.status().code(), absl::StrCat(Describe(node), ": ", params.status().message()));
    if (!params->has_value() || !view.AllAttributesRead()) continue;
    auto types = op->InferTypes(**params, inputs);
    if (!types.ok())
      return absl::Status(types.status().code(), absl::StrCat(Describe(node), ": ", types.status().message()));
    if (static_cast<int>(types->size()) != num_outputs) continue;  // e.g. MaxPool asked for indices
    return Chosen{op, std::move(**params)};
  }
  return Chosen{};
}

}  // namespace

absl::StatusOr<OnnxModel> ImportOnnx(const onnx::ModelProto& model, const ImportOptions& options) {
  if (!model.has_graph()) return Invalid("the model has no graph");
  int opset = -1;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = static_cast<int>(o.version());
  if (opset < 0) return Invalid("the model does not import the default ONNX opset");
  if (opset < kMinOpset || opset > kMaxOpset)
    return Invalid(absl::StrCat("unsupported opset ", opset, " (supported: ", kMinOpset, " to ", kMaxOpset, ")"));
  const onnx::GraphProto& g = model.graph();
  if (g.sparse_initializer_size() > 0) return absl::UnimplementedError("sparse initializers are not supported");

  // ONNX's own shape inference gives the types of what opaque nodes produce.
  absl::flat_hash_map<std::string, OutputType> inferred, declared;
  absl::flat_hash_map<std::string, DataType> elem_types;  // also for tensors of unknown shape
  {
    onnx::ModelProto copy = model;
    try {
      onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(),
                                         onnx::ShapeInferenceOptions(false, 0, true));
    } catch (const std::exception&) {
      // Best effort: nodes whose types stay unknown are reported below.
    }
    for (const auto& vi : copy.graph().value_info()) {
      if (auto t = StaticType(vi.type())) inferred[vi.name()] = *t;
      if (vi.type().has_tensor_type())
        elem_types[vi.name()] = static_cast<DataType>(vi.type().tensor_type().elem_type());
    }
    for (const auto& vi : copy.graph().output())
      if (auto t = StaticType(vi.type())) inferred[vi.name()] = *t;
    for (const auto& vi : g.value_info())
      if (auto t = StaticType(vi.type())) declared[vi.name()] = *t;
    for (const auto& vi : g.output())
      if (auto t = StaticType(vi.type())) declared[vi.name()] = *t;
  }

  OnnxModel result;
  result.opset = opset;
  Graph& graph = result.graph;

  absl::flat_hash_set<std::string> outer;
  for (const auto& init : g.initializer()) {
    ASSIGN_OR_RETURN(TensorDataPtr data, TensorFromProto(init));
    ASSIGN_OR_RETURN(ValueId id, graph.AddWeight(init.name(), std::move(data)));
    (void)id;
    outer.insert(init.name());
  }
  for (const auto& in : g.input()) {
    ValueId existing = graph.FindValue(in.name());
    if (existing != kNoValue) {
      RETURN_IF_ERROR(graph.MarkWeightAsInput(existing));
      continue;
    }
    if (!in.type().has_tensor_type()) return Invalid(absl::StrCat("input '", in.name(), "' is not a tensor"));
    Shape shape;
    const auto& tt = in.type().tensor_type();
    if (!tt.has_shape()) return Invalid(absl::StrCat("input '", in.name(), "' has no shape"));
    for (const auto& d : tt.shape().dim()) {
      if (!d.has_dim_value())
        return Invalid(absl::StrCat("input '", in.name(), "' has a dynamic dimension '", d.dim_param(),
                                    "'; taso needs static input shapes"));
      shape.push_back(d.dim_value());
    }
    RETURN_IF_ERROR(graph.AddInput(in.name(), static_cast<DataType>(tt.elem_type()), std::move(shape)).status());
    outer.insert(in.name());
  }

  ASSIGN_OR_RETURN(std::vector<int> order, SortNodes(g, outer));
  for (int index : order) {
    const onnx::NodeProto& node = g.node(index);
    std::vector<ValueId> inputs;
    for (const auto& in : node.input()) inputs.push_back(in.empty() ? kNoValue : graph.FindValue(in));
    int num_outputs = node.output_size();
    while (num_outputs > 0 && node.output(num_outputs - 1).empty()) --num_outputs;
    Node probe;
    probe.inputs = inputs;
    const std::vector<InputInfo> infos = graph.InputInfos(probe);

    std::vector<std::string> out_names(node.output().begin(), node.output().begin() + num_outputs);
    const OnnxFolder fold = node.domain().empty() || node.domain() == "ai.onnx" ? FindOnnxFolder(node.op_type()) : nullptr;
    if (std::optional<TensorDataPtr> value;
        options.fold_shape_arithmetic && fold && num_outputs == 1 && (value = fold(node, opset, infos))) {
      RETURN_IF_ERROR(graph.AddNode(OpRegistry::Global().Find("Constant"), Params().Set("value", *value), {},
                                    node.name(), out_names).status());
      continue;
    }
    ASSIGN_OR_RETURN(Chosen chosen, ChooseOperator(node, opset, infos, num_outputs));
    if (chosen.op != nullptr) {
      ASSIGN_OR_RETURN(std::vector<ValueId> outs,
                       graph.AddNode(chosen.op, std::move(chosen.params), inputs, node.name(), out_names));
      for (ValueId v : outs) {  // what the file declares must agree with what the inputs give
        auto it = declared.find(graph.value(v).name);
        if (it != declared.end() && it->second.shape != graph.value(v).shape)
          return Invalid(absl::StrCat(Describe(node), ": the model declares '", it->first, "' with shape ",
                                      ShapeToString(it->second.shape), " but its inputs give ",
                                      ShapeToString(graph.value(v).shape)));
      }
      continue;
    }
    std::vector<OutputType> types;
    for (const std::string& name : out_names) {
      if (name.empty()) {
        types.emplace_back();
        continue;
      }
      const OutputType* type = nullptr;
      if (auto it = inferred.find(name); it != inferred.end()) type = &it->second;
      else if (auto it2 = declared.find(name); it2 != declared.end()) type = &it2->second;
      if (type != nullptr) {
        types.push_back(*type);
        continue;
      }
      OutputType unknown;  // ONNX cannot tell statically; kept, but nothing computes on it
      unknown.shape_known = false;
      auto et = elem_types.find(name);
      unknown.dtype = et == elem_types.end() ? DataType::kUndefined : et->second;
      types.push_back(unknown);
    }
    for (const auto& c : SubgraphCaptures(node))  // outer values a subgraph reads are dependencies too
      if (ValueId v = graph.FindValue(c); v != kNoValue) inputs.push_back(v);
    RETURN_IF_ERROR(graph.AddOpaqueNode(std::make_shared<onnx::NodeProto>(node), inputs, out_names, types).status());
  }

  for (const auto& out : g.output()) {
    ValueId v = graph.FindValue(out.name());
    if (v == kNoValue) return Invalid(absl::StrCat("graph output '", out.name(), "' is not produced by any node"));
    RETURN_IF_ERROR(graph.AddOutput(v));
  }
  if (graph.outputs().empty()) return Invalid("the graph has no outputs");

  auto shell = std::make_shared<onnx::ModelProto>(model);
  onnx::GraphProto* sg = shell->mutable_graph();
  sg->clear_node();
  sg->clear_initializer();
  sg->clear_value_info();  // inputs and outputs stay: their ValueInfoProtos are written back as they were
  result.shell = std::move(shell);
  return result;
}

absl::StatusOr<onnx::ModelProto> ReadModelFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Invalid(absl::StrCat("'", path, "' is a directory, not an ONNX file"));
  std::ifstream f(path, std::ios::binary);
  if (!f) return absl::NotFoundError(absl::StrCat("cannot open '", path, "': no such readable file"));
  std::stringstream buffer;
  buffer << f.rdbuf();
  if (f.bad()) return absl::NotFoundError(absl::StrCat("cannot read '", path, "' (is it a directory?)"));
  const std::string bytes = buffer.str();
  if (bytes.empty()) return Invalid(absl::StrCat("'", path, "' is empty, not an ONNX model"));
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes))
    return Invalid(absl::StrCat("'", path, "' is not an ONNX model (it does not parse; truncated or another format?)"));
  if (!model.has_graph() || model.opset_import_size() == 0 || model.ir_version() <= 0)
    return Invalid(absl::StrCat("'", path, "' is not a complete ONNX model (no graph, IR version or opset import; truncated?)"));
  return model;
}

absl::StatusOr<OnnxModel> ImportOnnxFile(const std::string& path, const ImportOptions& options) {
  ASSIGN_OR_RETURN(onnx::ModelProto model, ReadModelFile(path));
  return ImportOnnx(model, options);
}

}  // namespace taso
