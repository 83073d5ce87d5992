// ONNX export: Graph -> ModelProto, checked by the ONNX checker before it is returned.
#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "onnx/checker.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx_tensor.h"
#include "taso/onnx_io.h"
#include "taso/status_macros.h"

namespace taso {
namespace {

void FillValueInfo(const Value& v, onnx::ValueInfoProto* vi) {
  vi->set_name(v.name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(v.dtype));
  auto* shape = tt->mutable_shape();
  for (int64_t d : v.shape) shape->add_dim()->set_dim_value(d);
}

// The ValueInfoProto the original model had for this name, or a fresh one.
void WriteValueInfo(const Value& v, const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& original,
                    onnx::ValueInfoProto* out) {
  for (const auto& vi : original)
    if (vi.name() == v.name) {
      *out = vi;
      if (auto t = vi.type(); t.has_tensor_type() && t.tensor_type().has_shape()) {
        bool same = t.tensor_type().shape().dim_size() == static_cast<int>(v.shape.size());
        for (int i = 0; same && i < t.tensor_type().shape().dim_size(); ++i)
          same = t.tensor_type().shape().dim(i).dim_value() == v.shape[i];
        if (same) return;
      }
      break;
    }
  FillValueInfo(v, out);
}

// The names of the graph's values and nodes: a name made up during the export must be
// none of them.
absl::flat_hash_set<std::string> UsedNames(const Graph& graph) {
  absl::flat_hash_set<std::string> used;
  for (ValueId v = 0; v < graph.num_values(); ++v) used.insert(graph.value(v).name);
  for (NodeId n = 0; n < graph.num_nodes(); ++n) used.insert(graph.node(n).name);
  return used;
}

// Node names made unique: ONNX Runtime refuses two nodes of one name (rewrites can make
// such names), so a repeated name gets a suffix no value or node has.
class UniqueNodeNames {
 public:
  explicit UniqueNodeNames(absl::flat_hash_set<std::string>& used) : used_(used) {}
  std::string Of(const std::string& name) {
    if (name.empty() || written_.insert(name).second) return name;
    std::string fresh;
    for (int i = 2; used_.contains(fresh = absl::StrCat(name, "_", i)); ++i) {
    }
    used_.insert(fresh);
    return fresh;
  }

 private:
  absl::flat_hash_set<std::string>& used_;
  absl::flat_hash_set<std::string> written_;
};

// Writes one node: an opaque node's NodeProto as it was, a library node through its
// operator's ToOnnx.
absl::Status WriteNode(const OnnxModel& model, const Node& node, UniqueNodeNames& names,
                       absl::flat_hash_set<std::string>& used, onnx::GraphProto* g) {
  const Graph& graph = model.graph;
  if (node.onnx_node) {
    onnx::NodeProto* copy = g->add_node();
    *copy = *node.onnx_node;
    copy->set_name(names.Of(copy->name()));
    return absl::OkStatus();
  }
  std::vector<std::string> ins, outs;
  for (ValueId v : node.inputs) ins.push_back(v == kNoValue ? "" : graph.value(v).name);
  for (ValueId v : node.outputs) outs.push_back(graph.value(v).name);
  OnnxExportNode e(*g, names.Of(node.name), ins, outs, graph.InputInfos(node), graph.OutputTypes(node), model.opset,
                   used);
  absl::Status s = node.op->onnx().ToOnnx(node.params, e);
  if (!s.ok())
    return absl::Status(s.code(),
                        absl::StrCat("exporting node '", node.name, "' (", node.op->name(), "): ", s.message()));
  return absl::OkStatus();
}

// Value infos for what the nodes produce, other than the graph's inputs and outputs,
// where the shape is known.
void WriteIntermediateValueInfos(const Graph& graph, const std::vector<NodeId>& order, onnx::GraphProto* g) {
  absl::flat_hash_set<ValueId> listed(graph.inputs().begin(), graph.inputs().end());
  listed.insert(graph.outputs().begin(), graph.outputs().end());
  for (NodeId id : order)
    for (ValueId v : graph.node(id).outputs)
      if (!listed.contains(v) && graph.value(v).shape_known) FillValueInfo(graph.value(v), g->add_value_info());
}

// The ONNX checker and strict shape inference (every type ONNX infers must agree with
// what was written) must accept the model; the inference adds the value infos it finds.
absl::Status CheckAndInferShapes(onnx::ModelProto* model) {
  try {
    onnx::checker::check_model(*model);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("the exported model fails the ONNX checker: ", e.what()));
  }
  try {
    onnx::shape_inference::InferShapes(*model, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(true, 1, false));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("the exported model fails ONNX shape inference: ", e.what()));
  }
  return absl::OkStatus();
}

}  // namespace

OnnxModel NewOnnxModel(Graph graph, int opset, std::string graph_name) {
  auto shell = std::make_shared<onnx::ModelProto>();
  shell->set_ir_version(onnx::IR_VERSION);
  shell->set_producer_name("taso");
  shell->set_producer_version("0.1");
  auto* op = shell->add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  shell->mutable_graph()->set_name(std::move(graph_name));
  OnnxModel m;
  m.graph = std::move(graph);
  m.shell = std::move(shell);
  m.opset = opset;
  return m;
}

absl::StatusOr<onnx::ModelProto> ExportOnnx(const OnnxModel& model) {
  const Graph& graph = model.graph;
  RETURN_IF_ERROR(graph.Validate());
  onnx::ModelProto out = model.shell ? *model.shell : *NewOnnxModel(Graph(), model.opset).shell;
  onnx::GraphProto* g = out.mutable_graph();
  const auto original_inputs = g->input();
  const auto original_outputs = g->output();
  g->clear_input();
  g->clear_output();
  g->clear_node();
  g->clear_initializer();
  g->clear_value_info();

  absl::flat_hash_set<std::string> used = UsedNames(graph);
  for (ValueId v : graph.inputs()) WriteValueInfo(graph.value(v), original_inputs, g->add_input());
  for (ValueId v : graph.weights()) TensorToProto(*graph.value(v).data, graph.value(v).name, g->add_initializer());
  ASSIGN_OR_RETURN(std::vector<NodeId> order, graph.TopologicalOrder());
  UniqueNodeNames names(used);
  for (NodeId id : order) RETURN_IF_ERROR(WriteNode(model, graph.node(id), names, used, g));
  for (ValueId v : graph.outputs()) WriteValueInfo(graph.value(v), original_outputs, g->add_output());
  WriteIntermediateValueInfos(graph, order, g);
  RETURN_IF_ERROR(CheckAndInferShapes(&out));
  return out;
}

absl::Status WriteModelFile(const onnx::ModelProto& model, const std::string& path) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "'"));
    if (!model.SerializeToOstream(&f) || !f.flush()) {
      f.close();
      std::remove(tmp.c_str());
      return absl::InternalError(absl::StrCat("failed writing '", path, "' (model too large or disk full?)"));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "'"));
  }
  return absl::OkStatus();
}

absl::Status ExportOnnxFile(const OnnxModel& model, const std::string& path) {
  ASSIGN_OR_RETURN(onnx::ModelProto proto, ExportOnnx(model));
  return WriteModelFile(proto, path);
}

}  // namespace taso
