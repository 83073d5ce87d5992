// ONNX export: Graph -> ModelProto, checked by the ONNX checker before it is returned.
#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "onnx/checker.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx_structure.h"
#include "taso/ir/memory_limit.h"
#include "taso/ir/onnx_tensor.h"
#include "taso/ir/status_macros.h"
#include "taso/onnx/onnx_io.h"
#include "taso/onnx/onnx_model_copy.h"
#include "taso/onnx/shared_weights_file.h"

namespace taso {
namespace {

// How the checks' errors name a model the export wrote.
constexpr absl::string_view kExported = "the exported model";

// The value's type; its dimensions as `names` says where given (see DimNames).
void FillValueInfo(const Value& v, onnx::ValueInfoProto* vi, const DimNames* names = nullptr) {
  vi->set_name(v.name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(v.dtype));
  if (!v.shape_known) return tt->clear_shape();  // no shape is "unknown", an empty one a scalar
  auto* shape = tt->mutable_shape();
  shape->clear_dim();
  for (size_t i = 0; i < v.shape.size(); ++i) {
    auto* dim = shape->add_dim();
    const bool named = names && i < names->size() && (*names)[i].has_value();
    if (!named)
      dim->set_dim_value(v.shape[i]);
    else if (!(*names)[i]->empty())
      dim->set_dim_param(*(*names)[i]);
  }
}

// The names the file declared for dimensions written symbolic but unnamed (they move with
// the inputs' sizes, though not as one of them does): the user's name for an output's
// length stays, and ONNX's inference does not invent one.
void KeepDeclaredNames(const onnx::ValueInfoProto& declared, onnx::ValueInfoProto* out) {
  const auto& was = declared.type().tensor_type().shape();
  auto* now = out->mutable_type()->mutable_tensor_type()->mutable_shape();
  if (was.dim_size() != now->dim_size()) return;
  for (int i = 0; i < now->dim_size(); ++i) {
    auto* d = now->mutable_dim(i);
    if (!d->has_dim_value() && !d->has_dim_param() && was.dim(i).has_dim_param())
      d->set_dim_param(was.dim(i).dim_param());
  }
}

// The ValueInfoProto the original model had for this name (with the symbolic dimensions
// kept, if any; as it was where the value's shape is unknown here), or a fresh one.
void WriteValueInfo(const OnnxModel& model, const Value& v,
                    const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& original,
                    onnx::ValueInfoProto* out) {
  const auto symbolic = model.symbolic_shapes.find(v.name);
  for (const auto& vi : original)
    if (vi.name() == v.name) {
      *out = vi;
      if (!v.shape_known) return;  // the file's declaration is all that is known
      if (symbolic != model.symbolic_shapes.end()) {
        FillValueInfo(v, out, &symbolic->second);
        return KeepDeclaredNames(vi, out);
      }
      if (auto t = vi.type(); t.has_tensor_type() && t.tensor_type().has_shape()) {
        bool same = t.tensor_type().shape().dim_size() == static_cast<int>(v.shape.size());
        for (int i = 0; same && i < t.tensor_type().shape().dim_size(); ++i)
          same = t.tensor_type().shape().dim(i).dim_value() == v.shape[i];
        if (same) return;
      }
      break;
    }
  FillValueInfo(v, out, symbolic == model.symbolic_shapes.end() ? nullptr : &symbolic->second);
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

// Writes one node: an opaque node's NodeProto as it was, reading the values its inputs
// are now (a rewrite may have given one another name: the e-graph makes two equal
// Constant nodes one), a library node through its operator's ToOnnx.
absl::Status WriteNode(const OnnxModel& model, const Node& node, UniqueNodeNames& names,
                       absl::flat_hash_set<std::string>& used, onnx::GraphProto* g) {
  const Graph& graph = model.graph;
  if (node.onnx_node) {
    onnx::NodeProto* copy = g->add_node();
    *copy = *node.onnx_node;
    copy->set_name(names.Of(copy->name()));
    // The NodeProto's inputs come first in node.inputs (values its subgraphs capture follow).
    for (int i = 0; i < copy->input_size() && i < static_cast<int>(node.inputs.size()); ++i)
      if (node.inputs[i] != kNoValue) copy->set_input(i, graph.value(node.inputs[i]).name);
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

// `names` with each named dimension unnamed (still symbolic).
DimNames Unnamed(DimNames names) {
  for (auto& name : names)
    if (name.has_value()) name = "";
  return names;
}

// Value infos for what the nodes produce, other than the graph's inputs and outputs,
// where the shape is known; their symbolic dimensions unnamed, so that the file says of
// them no more than ONNX's inference (which ONNX Runtime runs too) can tell from the
// inputs. A name says that two sizes are equal, and ONNX Runtime's optimizer turns such
// equalities into Reshape targets of 0 (copy) and -1 (infer), which it cannot apply where
// a dimension is 0: a decoder's heads merged by a target computed from another tensor's
// shape became [0, 0, -1], and the file failed with no new tokens where the input ran.
void WriteIntermediateValueInfos(const OnnxModel& model, const std::vector<NodeId>& order, onnx::GraphProto* g) {
  const Graph& graph = model.graph;
  absl::flat_hash_set<ValueId> listed(graph.inputs().begin(), graph.inputs().end());
  listed.insert(graph.outputs().begin(), graph.outputs().end());
  for (NodeId id : order)
    for (ValueId v : graph.node(id).outputs) {
      if (listed.contains(v) || !graph.value(v).shape_known) continue;
      const auto names = model.symbolic_shapes.find(graph.value(v).name);
      if (names == model.symbolic_shapes.end()) {
        FillValueInfo(graph.value(v), g->add_value_info());
        continue;
      }
      const DimNames unnamed = Unnamed(names->second);
      FillValueInfo(graph.value(v), g->add_value_info(), &unnamed);
    }
}

// The ONNX checker on the model `check` holds, with the error ExportOnnx gives (`subject`
// names the model).
absl::Status RunChecker(const std::function<void()>& check, absl::string_view subject = kExported) {
  try {
    check();
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(subject, " fails the ONNX checker: ", e.what()));
  }
  return absl::OkStatus();
}

// Strict shape inference (every type ONNX infers must agree with what was written), which
// adds the value infos it finds. A model ONNX's inference mishandles (SafeForOnnxInference)
// is left to the checker alone; the end-to-end check runs it in the target runtime all the
// same.
absl::Status InferShapesStrictly(onnx::ModelProto* model, int opset, absl::string_view subject = kExported) {
  if (!SafeForOnnxInference(model->graph(), opset)) return absl::OkStatus();
  try {
    onnx::shape_inference::InferShapes(*model, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(true, 1, false));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(subject, " fails ONNX shape inference: ", e.what()));
  }
  return absl::OkStatus();
}

// The ONNX checker and strict shape inference must accept the model.
absl::Status CheckAndInferShapes(onnx::ModelProto* model, int opset, absl::string_view subject = kExported) {
  RETURN_IF_ERROR(RunChecker([model] { onnx::checker::check_model(*model); }, subject));
  return InferShapesStrictly(model, opset, subject);
}

// Value infos without the dimension names ONNX's inference invents ("unk__N"), each then
// an unnamed dimension. Such a name says that two sizes are equal, and ONNX Runtime's
// optimizers trust it: with the detections RetinaNet keeps (a count known only at run
// time) named alike in two tensors, it rewrote a Reshape target to [0, -1], which it
// cannot apply to no detection. The input's own names are kept.
void DropInventedDimNames(onnx::ValueInfoProto& vi) {
  if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
  for (auto& d : *vi.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim())
    if (d.has_dim_param() && absl::StartsWith(d.dim_param(), "unk__")) d.clear_dim_param();
}

// Those of the value infos, and of the outputs whose declaration the export changed (an
// output written as the file declared it stays so).
void DropInventedDimNames(onnx::GraphProto* g,
                          const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& declared) {
  for (auto& vi : *g->mutable_value_info()) DropInventedDimNames(vi);
  for (auto& out : *g->mutable_output()) {
    const auto same_name = std::find_if(declared.begin(), declared.end(),
                                        [&](const onnx::ValueInfoProto& d) { return d.name() == out.name(); });
    if (same_name == declared.end() || same_name->SerializeAsString() != out.SerializeAsString())
      DropInventedDimNames(out);
  }
}

// Initializers at least this large are written to the data file (as the ONNX library's
// convert_model_to_external_data does by default); smaller ones stay in the model, and so
// do integer ones, whose values ONNX's shape inference may read (it runs once the data
// file is written, and cannot read values there).
constexpr size_t kExternalDataThreshold = 1024;

// Whether the initializer goes to the data file.
bool GoesToDataFile(int32_t data_type, int64_t bytes) {
  return IsFloatingPoint(data_type) && bytes >= static_cast<int64_t>(kExternalDataThreshold);
}

// A weight whose initializer was added without its values (its name, type and shape only),
// so that building a model never copies a large model's weights whole: each is copied when
// it is written, one at a time (FillInline, MoveWeightsTo).
struct DeferredWeight {
  int initializer;  // its index among the graph's initializers
  TensorDataPtr data;
};

int64_t WeightBytes(const TensorData& data) { return data.numel() * ElementBytes(static_cast<int32_t>(data.dtype())); }

// The weight as an initializer: with its values where it is small or `deferred` is null,
// else without them, recorded in `deferred`.
void AddInitializer(const TensorDataPtr& data, const std::string& name, onnx::GraphProto* g,
                    std::vector<DeferredWeight>* deferred) {
  onnx::TensorProto* init = g->add_initializer();
  if (deferred == nullptr || !GoesToDataFile(static_cast<int32_t>(data->dtype()), WeightBytes(*data)))
    return TensorToProto(*data, name, init);
  init->set_name(name);
  init->set_data_type(static_cast<int32_t>(data->dtype()));
  for (int64_t d : data->shape()) init->add_dims(d);
  deferred->push_back({g->initializer_size() - 1, data});
}

int64_t DeferredBytes(const std::vector<DeferredWeight>& deferred) {
  int64_t bytes = 0;
  for (const DeferredWeight& w : deferred) bytes += WeightBytes(*w.data);
  return bytes;
}

// The deferred weights' values put in their initializers.
void FillInline(const std::vector<DeferredWeight>& deferred, onnx::GraphProto* g) {
  for (const DeferredWeight& w : deferred) {
    onnx::TensorProto* init = g->mutable_initializer(w.initializer);
    const std::string name = init->name();  // TensorToProto clears the proto first
    TensorToProto(*w.data, name, init);
  }
}

// The deferred weights, and the initializers that hold their values and go to the data
// file too (GoesToDataFile), moved to `file` one at a time.
absl::Status MoveWeightsTo(SharedWeightsFile& file, const std::vector<DeferredWeight>& deferred, onnx::GraphProto* g) {
  for (const DeferredWeight& w : deferred) RETURN_IF_ERROR(file.Place(w.data, *g->mutable_initializer(w.initializer)));
  for (auto& init : *g->mutable_initializer())
    if (GoesToDataFile(init.data_type(), static_cast<int64_t>(init.raw_data().size())))
      RETURN_IF_ERROR(file.Append(init));
  return file.Flush();
}

// The weights moved to `data_path`, written atomically and named in the model relative to
// its directory.
absl::Status WriteDataFile(const std::vector<DeferredWeight>& deferred, onnx::GraphProto* g,
                           const std::string& data_path) {
  const std::string tmp = data_path + ".tmp";
  absl::Status status;
  {
    SharedWeightsFile data(tmp, std::filesystem::path(data_path).filename().string());
    status = MoveWeightsTo(data, deferred, g);
  }
  if (status.ok() && std::rename(tmp.c_str(), data_path.c_str()) != 0)
    status = absl::PermissionDeniedError(absl::StrCat("cannot write '", data_path, "'"));
  if (!status.ok()) std::remove(tmp.c_str());
  return status;
}

// The model's graph as ONNX, not yet checked: the shell with the graph's inputs, weights
// (the large ones deferred where `deferred` is given), nodes in topological order, outputs
// and intermediate value infos.
absl::StatusOr<onnx::ModelProto> BuildModel(const OnnxModel& model, std::vector<DeferredWeight>* deferred) {
  const Graph& graph = model.graph;
  RETURN_IF_ERROR(graph.Validate());
  onnx::ModelProto out = model.shell ? *model.shell : *NewOnnxModel(Graph(), model.opset).shell;
  onnx::GraphProto* g = out.mutable_graph();
  g->clear_input();
  g->clear_output();
  g->clear_node();
  g->clear_initializer();
  g->clear_value_info();
  static const onnx::GraphProto kNoDeclarations;
  const onnx::GraphProto& original = model.shell ? model.shell->graph() : kNoDeclarations;

  absl::flat_hash_set<std::string> used = UsedNames(graph);
  for (ValueId v : graph.inputs()) WriteValueInfo(model, graph.value(v), original.input(), g->add_input());
  for (ValueId v : graph.weights()) AddInitializer(graph.value(v).data, graph.value(v).name, g, deferred);
  ASSIGN_OR_RETURN(std::vector<NodeId> order, graph.TopologicalOrder());
  UniqueNodeNames names(used);
  for (NodeId id : order) RETURN_IF_ERROR(WriteNode(model, graph.node(id), names, used, g));
  for (ValueId v : graph.outputs()) WriteValueInfo(model, graph.value(v), original.output(), g->add_output());
  WriteIntermediateValueInfos(model, order, g);
  return out;
}

// What the file's outputs were declared as.
const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& DeclaredOutputs(const OnnxModel& model) {
  static const onnx::GraphProto kNoDeclarations;
  return model.shell ? model.shell->graph().output() : kNoDeclarations.output();
}

// ExportOnnx's checks of a model that holds all its values, and the dimension names
// ONNX's inference invents dropped (the file's own outputs kept as declared).
absl::Status CheckWholeModel(const OnnxModel& model, onnx::ModelProto* proto) {
  if (OnnxCheckerCovers(model.opset)) RETURN_IF_ERROR(CheckAndInferShapes(proto, model.opset));
  DropInventedDimNames(proto->mutable_graph(), DeclaredOutputs(model));
  return absl::OkStatus();
}

// `proto`, whose weights are in data files beside `path` already, written there and
// checked as ExportOnnx checks a model, the ONNX checker reading the file written (it
// looks for the data files beside it).
absl::Status WriteBesideData(const OnnxModel& model, onnx::ModelProto proto, const std::string& path) {
  const bool checked = OnnxCheckerCovers(model.opset);
  if (checked) RETURN_IF_ERROR(InferShapesStrictly(&proto, model.opset));
  DropInventedDimNames(proto.mutable_graph(), DeclaredOutputs(model));
  return WriteModelFileChecked(proto, path, [checked](const std::string& file) {
    return checked ? RunChecker([&file] { onnx::checker::check_model(file); }) : absl::OkStatus();
  });
}

// The model written with its weights in ExternalDataPath(path), each copied from the graph
// as it is written; on any error neither file is left.
absl::Status ExportWithDataFile(const OnnxModel& model, onnx::ModelProto proto,
                                const std::vector<DeferredWeight>& deferred, const std::string& path) {
  const std::string data_path = ExternalDataPath(path);
  RETURN_IF_ERROR(WriteDataFile(deferred, proto.mutable_graph(), data_path));
  absl::Status written = WriteBesideData(model, std::move(proto), path);
  if (!written.ok()) std::remove(data_path.c_str());
  return written;
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

OnnxModel InShellOf(const OnnxModel& model, Graph graph) {
  OnnxModel m;
  m.graph = std::move(graph);
  m.shell = model.shell;
  m.opset = model.opset;
  return m;
}

absl::StatusOr<onnx::ModelProto> ExportOnnx(const OnnxModel& model) {
  ASSIGN_OR_RETURN(onnx::ModelProto out, BuildModel(model, nullptr));
  RETURN_IF_ERROR(CheckWholeModel(model, &out));
  return out;
}

absl::StatusOr<onnx::ModelProto> ExportOnnxWithoutWeights(const OnnxModel& model) {
  std::vector<DeferredWeight> deferred;
  return BuildModel(model, &deferred);
}

namespace {

// The model's nodes as ExportOnnx writes them, without weights or value infos; nullopt
// where one cannot be written.
std::optional<onnx::GraphProto> NodesAsWritten(const OnnxModel& model) {
  const Graph& graph = model.graph;
  onnx::GraphProto nodes;
  absl::flat_hash_set<std::string> used = UsedNames(graph);
  UniqueNodeNames names(used);
  for (NodeId id = 0; id < graph.num_nodes(); ++id)
    if (!WriteNode(model, graph.node(id), names, used, &nodes).ok()) return std::nullopt;
  return nodes;
}

}  // namespace

int OnnxNodeCount(const OnnxModel& model) {
  const std::optional<onnx::GraphProto> nodes = NodesAsWritten(model);
  return nodes ? nodes->node_size() : model.graph.num_nodes();
}

bool OnnxInferenceChecks(const OnnxModel& model) {
  if (!OnnxCheckerCovers(model.opset)) return false;
  const std::optional<onnx::GraphProto> nodes = NodesAsWritten(model);
  return nodes && SafeForOnnxInference(*nodes, model.opset);
}

bool OnnxCheckerCovers(int opset) { return opset <= kMaxCheckedOpset; }

std::string ExternalDataPath(const std::string& model_path) { return model_path + ".data"; }

absl::StatusOr<TemporaryFolder> MakeStagingFolder(const std::string& destination) {
  const std::filesystem::path parent = std::filesystem::absolute(destination).parent_path();
  absl::StatusOr<TemporaryFolder> folder = TemporaryFolder::Make(parent, ".taso-opt-");
  if (!folder.ok())
    return absl::PermissionDeniedError(absl::StrCat(folder.status().message(), " to stage '", destination, "'"));
  return folder;
}

absl::Status MoveModelIntoPlace(const std::string& staged, const std::string& destination, bool data_file) {
  std::error_code error;
  if (data_file) {
    std::filesystem::rename(ExternalDataPath(staged), ExternalDataPath(destination), error);
    if (error)
      return absl::PermissionDeniedError(
          absl::StrCat("cannot write '", ExternalDataPath(destination), "' (", error.message(), ")"));
  }
  std::filesystem::rename(staged, destination, error);
  if (!error) return absl::OkStatus();
  std::error_code ignored;
  if (data_file) std::filesystem::remove(ExternalDataPath(destination), ignored);
  return absl::PermissionDeniedError(absl::StrCat("cannot write '", destination, "' (", error.message(), ")"));
}

absl::Status WriteModelFileChecked(const onnx::ModelProto& model, const std::string& path,
                                   const std::function<absl::Status(const std::string&)>& check) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "' (", std::strerror(errno), ")"));
    if (!model.SerializeToOstream(&f) || !f.flush()) {
      f.close();
      std::remove(tmp.c_str());
      return absl::InternalError(absl::StrCat("failed writing '", path, "' (model too large or disk full?)"));
    }
  }
  if (absl::Status checked = check ? check(tmp) : absl::OkStatus(); !checked.ok()) {
    std::remove(tmp.c_str());
    return checked;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "'"));
  }
  return absl::OkStatus();
}

absl::Status InferShapesAsExportDoes(onnx::ModelProto model, absl::string_view subject) {
  const absl::StatusOr<int> opset = DefaultOpset(model);
  if (!opset.ok() || !OnnxCheckerCovers(*opset)) return absl::OkStatus();
  const absl::Status inferred = InferShapesStrictly(&model, *opset, subject);
  return inferred.ok() ? inferred : absl::InvalidArgumentError(inferred.message());
}

absl::Status WriteModelFile(const onnx::ModelProto& model, const std::string& path) {
  return WriteModelFileChecked(model, path, nullptr);
}

absl::Status ExportOnnxFile(const OnnxModel& model, const std::string& path, size_t max_inline_bytes) {
  std::vector<DeferredWeight> deferred;
  ASSIGN_OR_RETURN(onnx::ModelProto proto, BuildModel(model, &deferred));
  const bool small = proto.ByteSizeLong() + DeferredBytes(deferred) <= max_inline_bytes;
  if (model.external_data || !small) return ExportWithDataFile(model, std::move(proto), deferred, path);
  FillInline(deferred, proto.mutable_graph());
  RETURN_IF_ERROR(CheckWholeModel(model, &proto));
  // The value infos inference added can take a model just under the limit over it.
  if (proto.ByteSizeLong() > max_inline_bytes) return ExportWithDataFile(model, std::move(proto), {}, path);
  return WriteModelFile(proto, path);
}

absl::Status ExportOnnxFile(const OnnxModel& model, const std::string& path, SharedWeightsFile& weights) {
  if (std::filesystem::absolute(path).parent_path() != std::filesystem::absolute(weights.path()).parent_path())
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not in the folder of '", weights.path(), "'"));
  std::vector<DeferredWeight> deferred;
  ASSIGN_OR_RETURN(onnx::ModelProto proto, BuildModel(model, &deferred));
  RETURN_IF_ERROR(MoveWeightsTo(weights, deferred, proto.mutable_graph()));
  return WriteBesideData(model, std::move(proto), path);
}

}  // namespace taso
