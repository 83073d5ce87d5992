// ONNX import: ModelProto -> Graph. Every node is imported: as a library operator where
// one represents it exactly, otherwise as an opaque node that keeps its NodeProto.
#include <fcntl.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx_spellings.h"
#include "onnx_stale_declarations.h"
#include "onnx_static_type.h"
#include "onnx_structure.h"
#include "onnx_tensor_walk.h"
#include "taso/ir/onnx_fold.h"
#include "taso/ir/onnx_size_limit.h"
#include "taso/ir/onnx_tensor.h"
#include "taso/ir/ops/constant.h"
#include "taso/ir/ops/names.h"
#include "taso/ir/ops/onnx_schema_changes.h"
#include "taso/ir/status_macros.h"
#include "taso/onnx/onnx_input_shapes.h"
#include "taso/onnx/onnx_io.h"
#include "taso/onnx/onnx_isolated_inference.h"
#include "taso/onnx/onnx_model_copy.h"

namespace taso {
namespace {

using InputShapes = absl::flat_hash_map<std::string, Shape>;

// Tries the library operators that claim this node's type; nullptr op means opaque.
struct Chosen {
  const OpDef* op = nullptr;
  Params params;
};

absl::StatusOr<Chosen> ChooseOperator(const onnx::NodeProto& node, int opset, const std::vector<InputInfo>& inputs,
                                      int num_outputs) {
  if (!IsDefaultDomain(node.domain())) return Chosen{};
  // Library operators compute on float32 data of known shape; integer shape arithmetic,
  // and whatever reads a tensor of unknown shape, stays opaque.
  if (!inputs.empty() && inputs[0].present && inputs[0].dtype != DataType::kFloat32) return Chosen{};
  for (const InputInfo& in : inputs)
    if (in.present && !in.shape_known) return Chosen{};
  for (const OpDef* op : OpRegistry::Global().ForOnnxType(node.op_type())) {
    OnnxImportNode view(node, opset, inputs);
    auto params = op->onnx().Import(view);
    if (!params.ok())
      return absl::Status(params.status().code(), absl::StrCat(DescribeNode(node), ": ", params.status().message()));
    if (!params->has_value() || !view.AllAttributesRead()) continue;
    auto types = op->InferTypes(**params, inputs);
    if (!types.ok())
      return absl::Status(types.status().code(), absl::StrCat(DescribeNode(node), ": ", types.status().message()));
    if (static_cast<int>(types->size()) != num_outputs) continue;  // e.g. MaxPool asked for indices
    return Chosen{op, std::move(**params)};
  }
  return Chosen{};
}

// The model at kMinOpset, by ONNX's version converter (PyTorch and older exporters write
// opsets 7 to 10: Upsample for Resize, BatchNormalization with spatial, ...). The model
// has passed CheckStructure; the converter runs isolated, after CheckConvertible.
absl::StatusOr<onnx::ModelProto> ConvertedToMinOpset(const onnx::ModelProto& model, int opset) {
  const absl::Status checked = CheckConvertible(model, opset);
  const absl::StatusOr<onnx::ModelProto> converted =
      checked.ok() ? ConvertVersionIsolated(model, kMinOpset) : absl::StatusOr<onnx::ModelProto>(checked);
  if (converted.ok()) return converted;
  return absl::InvalidArgumentError(absl::StrCat("opset ", opset, " could not be converted to opset ", kMinOpset,
                                                 " (the oldest supported): ", converted.status().message()));
}

// The types ONNX knows for a model's values, by name.
struct KnownTypes {
  absl::flat_hash_map<std::string, OutputType> inferred;  // by ONNX's own shape inference
  absl::flat_hash_map<std::string, OutputType> declared;  // by the file (value_info, outputs)
  absl::flat_hash_map<std::string, DataType> elem_types;  // inferred, also for tensors of unknown shape
  // Values whose shape, or whose value as shape arithmetic, depends on a symbolic input
  // dimension: never folded into constants.
  absl::flat_hash_set<std::string> dynamic;
};

// The model as ONNX's shape inference sees it. At an opset the installed library does not
// know, nodes whose shape rule changed since are left out (what they produce, and what
// depends on it, stays unknown to ONNX) rather than inferred with the old rule.
// `shapes`: the inputs' shapes to infer from, where they are not the declared ones.
onnx::ModelProto CopyToInfer(const onnx::ModelProto& model, int opset, const InputShapes& shapes) {
  onnx::ModelProto copy = CopyForShapeInference(model);
  SetInputShapes(shapes, copy);
  if (opset > kMaxCheckedOpset) {
    auto* nodes = copy.mutable_graph()->mutable_node();
    for (int i = nodes->size() - 1; i >= 0; --i)
      if (IsDefaultDomain(nodes->Get(i).domain()) &&
          ops::OnnxShapeRuleChanged(nodes->Get(i).op_type(), kMaxCheckedOpset, opset))
        nodes->DeleteSubrange(i, 1);
  }
  return copy;
}

onnx::ModelProto InferredCopy(const onnx::ModelProto& model, int opset, const InputShapes& shapes = {}) {
  onnx::ModelProto copy = CopyToInfer(model, opset, shapes);
  // Best effort: nodes whose types stay unknown are reported by the caller.
  if (SafeForOnnxInference(model.graph(), opset)) InferShapesIsolated(&copy);
  return copy;
}

// The static types of a graph's value infos and outputs, added to `types` where it has none.
void AddStaticTypes(const onnx::GraphProto& g, absl::flat_hash_map<std::string, OutputType>& types) {
  for (const auto* infos : {&g.value_info(), &g.output()})
    for (const auto& vi : *infos)
      if (auto t = StaticType(vi.type())) types.emplace(vi.name(), *t);
}

// ONNX's own shape inference gives the types of what opaque nodes produce.
KnownTypes KnownTypesOf(const onnx::ModelProto& model, int opset, const InputShapes& shapes = {}) {
  KnownTypes known;
  const onnx::ModelProto copy = InferredCopy(model, opset, shapes);
  AddStaticTypes(copy.graph(), known.inferred);
  for (const auto& vi : copy.graph().value_info())
    if (vi.type().has_tensor_type())
      known.elem_types[vi.name()] = static_cast<DataType>(vi.type().tensor_type().elem_type());
  AddStaticTypes(model.graph(), known.declared);
  return known;
}

// The values of a model with symbolic input dimensions whose shapes ONNX's inference (with
// data propagation, through shape arithmetic) cannot tell statically, and everything
// computed from them. A Shape node's output has a static shape but a value that depends
// on its input's shape, hence "computed from".
absl::flat_hash_set<std::string> DynamicValues(const onnx::ModelProto& model, int opset) {
  const onnx::ModelProto copy = InferredCopy(model, opset);
  absl::flat_hash_set<std::string> dynamic;
  for (const auto& vi : copy.graph().input())
    if (!StaticType(vi.type())) dynamic.insert(vi.name());
  for (const auto& vi : copy.graph().value_info())
    if (!StaticType(vi.type())) dynamic.insert(vi.name());
  for (const auto& node : copy.graph().node()) {  // in the file's order, which is usually topological
    bool reads_dynamic = false;
    for (const auto& in : node.input()) reads_dynamic |= dynamic.contains(in);
    if (reads_dynamic)
      for (const auto& out : node.output()) dynamic.insert(out);
  }
  return dynamic;
}

// A graph input's shape, which must be static.
absl::StatusOr<Shape> StaticInputShape(const onnx::ValueInfoProto& in) {
  if (!in.type().has_tensor_type())
    return absl::InvalidArgumentError(absl::StrCat("input '", in.name(), "' is not a tensor"));
  const auto& tt = in.type().tensor_type();
  if (!tt.has_shape()) return absl::InvalidArgumentError(absl::StrCat("input '", in.name(), "' has no shape"));
  Shape shape;
  for (const auto& d : tt.shape().dim()) {
    if (!d.has_dim_value())
      return absl::InvalidArgumentError(absl::StrCat("input '", in.name(), "' has a dynamic dimension '", d.dim_param(),
                                                     "'; taso needs static input shapes"));
    shape.push_back(d.dim_value());
  }
  return shape;
}

// The memory the initializers and the inputs of static shape declare, against the limit,
// before any is read.
absl::Status CheckDeclaredMemory(const onnx::GraphProto& g, const InputShapes& shapes, int64_t limit_bytes) {
  MemoryBudget budget(limit_bytes);
  absl::flat_hash_set<absl::string_view> initializers;
  for (const auto& init : g.initializer()) {
    budget.Add(init.name(), init.data_type(), init.dims());
    initializers.insert(init.name());
  }
  for (const auto& in : g.input()) {
    if (initializers.contains(in.name())) continue;
    const auto bound = shapes.find(in.name());
    if (bound != shapes.end())
      budget.Add(in.name(), in.type().tensor_type().elem_type(), bound->second);
    else if (auto t = StaticType(in.type()))
      budget.Add(in.name(), static_cast<int32_t>(t->dtype), t->shape);
  }
  return budget.Check();
}

// Whether the initializer holds no values at all, as ExportOnnxWithoutWeights writes one.
bool HoldsNoValues(const onnx::TensorProto& t) {
  return !t.has_raw_data() && t.data_location() != onnx::TensorProto::EXTERNAL && t.float_data_size() == 0 &&
         t.int32_data_size() == 0 && t.int64_data_size() == 0 && t.double_data_size() == 0 &&
         t.uint64_data_size() == 0 && t.string_data_size() == 0;
}

// Whether `data` is of `init`'s element type and shape.
bool SameTypeAndShape(const TensorData& data, const onnx::TensorProto& init) {
  return static_cast<int32_t>(data.dtype()) == init.data_type() &&
         std::equal(data.shape().begin(), data.shape().end(), init.dims().begin(), init.dims().end());
}

// `init`'s values: `shared`'s weight of that name where it holds them (or where `init`
// holds none, the weights were left out, and that weight is of its type and shape), else read.
absl::StatusOr<TensorDataPtr> WeightData(const onnx::TensorProto& init, const ImportOptions& options) {
  if (const Graph* shared = options.shared_weights) {
    const ValueId v = shared->FindValue(init.name());
    // A weight listed as an input too shares its default values.
    const TensorDataPtr data = v != kNoValue ? shared->value(v).data : nullptr;
    if (data && options.weights_left_out && HoldsNoValues(init) && SameTypeAndShape(*data, init)) return data;
    if (data && HoldsValuesOf(*data, init, options.external_data_dir)) return data;
  }
  return TensorFromProto(init, options.external_data_dir);
}

// The initializers as weights, then the graph inputs (an input that is also an initializer
// is a weight marked as an input). Their names go into `outer`.
absl::Status AddWeightsAndInputs(const onnx::GraphProto& g, const ImportOptions& options, const InputShapes& shapes,
                                 Graph& graph, absl::flat_hash_set<std::string>& outer) {
  for (const auto& init : g.initializer()) {
    ASSIGN_OR_RETURN(TensorDataPtr data, WeightData(init, options));
    RETURN_IF_ERROR(graph.AddWeight(init.name(), std::move(data)).status());
    outer.insert(init.name());
  }
  for (const auto& in : g.input()) {
    if (ValueId existing = graph.FindValue(in.name()); existing != kNoValue) {
      RETURN_IF_ERROR(graph.MarkWeightAsInput(existing));
      continue;
    }
    const auto bound = shapes.find(in.name());
    ASSIGN_OR_RETURN(Shape shape, bound != shapes.end() ? bound->second : StaticInputShape(in));
    const auto elem_type = static_cast<DataType>(in.type().tensor_type().elem_type());
    RETURN_IF_ERROR(graph.AddInput(in.name(), elem_type, std::move(shape)).status());
    outer.insert(in.name());
  }
  return absl::OkStatus();
}

// Adds nodes to the graph, each as a Constant where it is shape arithmetic that folds, else
// as the library operator that represents it, else as an opaque node.
class NodeImporter {
 public:
  NodeImporter(int opset, const ImportOptions& options, KnownTypes known, Graph& graph)
      : opset_(opset), options_(options), known_(std::move(known)), graph_(graph) {}

  // The node's inputs must be in the graph already.
  absl::Status Add(const onnx::NodeProto& node) {
    std::vector<ValueId> inputs;
    for (const auto& in : node.input()) inputs.push_back(in.empty() ? kNoValue : graph_.FindValue(in));
    int num_outputs = node.output_size();  // trailing optional outputs left out
    while (num_outputs > 0 && node.output(num_outputs - 1).empty()) --num_outputs;
    const std::vector<std::string> out_names(node.output().begin(), node.output().begin() + num_outputs);
    Node probe;
    probe.inputs = inputs;
    const std::vector<InputInfo> infos = graph_.InputInfos(probe);
    ASSIGN_OR_RETURN(const bool folded, TryFold(node, infos, out_names));
    if (folded) return absl::OkStatus();
    // A library operator has all of its outputs: one with an output omitted in the
    // middle stays opaque.
    const bool omits_output = std::find(out_names.begin(), out_names.end(), "") != out_names.end();
    Chosen chosen;
    if (!omits_output) {
      ASSIGN_OR_RETURN(chosen, ChooseOperator(node, opset_, infos, num_outputs));
    }
    if (chosen.op != nullptr) return AddLibraryNode(node, std::move(chosen), inputs, out_names);
    RETURN_IF_ERROR(CheckRuntimeAccepts(node, infos));
    return AddOpaqueNode(node, std::move(inputs), out_names);
  }

 private:
  // Adds a Constant for a single-output node that folds on these inputs; false where the
  // options ask for no folding or the node does not fold.
  absl::StatusOr<bool> TryFold(const onnx::NodeProto& node, const std::vector<InputInfo>& infos,
                               const std::vector<std::string>& out_names) {
    const OnnxFolder fold = IsDefaultDomain(node.domain()) ? FindOnnxFolder(node.op_type()) : nullptr;
    if (!options_.fold_shape_arithmetic || !fold || out_names.size() != 1) return false;
    for (const auto& in : node.input())
      if (known_.dynamic.contains(in)) return false;
    std::optional<TensorDataPtr> value = fold(node, opset_, infos);
    if (!value) return false;
    RETURN_IF_ERROR(
        graph_.AddNode(ops::ConstantOp(), ops::ConstantParams(*value), {}, node.name(), out_names).status());
    return true;
  }

  // What the file declares for the outputs must agree with what the inputs give.
  absl::Status AddLibraryNode(const onnx::NodeProto& node, Chosen chosen, const std::vector<ValueId>& inputs,
                              const std::vector<std::string>& out_names) {
    ASSIGN_OR_RETURN(std::vector<ValueId> outs,
                     graph_.AddNode(chosen.op, std::move(chosen.params), inputs, node.name(), out_names));
    for (ValueId v : outs) {
      auto it = known_.declared.find(graph_.value(v).name);
      if (it != known_.declared.end() && it->second.shape != graph_.value(v).shape)
        return StaleDeclarationError(absl::StrCat(DescribeNode(node), ": the model declares '", it->first,
                                                  "' with shape ", ShapeToString(it->second.shape),
                                                  " but its inputs give ", ShapeToString(graph_.value(v).shape)));
    }
    return absl::OkStatus();
  }

  // An opaque node at sizes a runtime refuses although ONNX's inference accepts them
  // (onnx_size_limit.h) fails the import, as a library operator's wrong sizes do.
  static absl::Status CheckRuntimeAccepts(const onnx::NodeProto& node, const std::vector<InputInfo>& infos) {
    const OnnxSizeLimit limit = IsDefaultDomain(node.domain()) ? FindOnnxSizeLimit(node.op_type()) : nullptr;
    if (limit == nullptr) return absl::OkStatus();
    const absl::Status fits = limit(node, infos);
    if (fits.ok()) return fits;
    return absl::InvalidArgumentError(
        absl::StrCat("node '", node.name(), "' (", node.op_type(), "): ", fits.message()));
  }

  // Outer values a subgraph reads are the node's dependencies too. Omitted outputs get no
  // value (the NodeProto keeps their places).
  absl::Status AddOpaqueNode(const onnx::NodeProto& node, std::vector<ValueId> inputs,
                             const std::vector<std::string>& all_names) {
    std::vector<std::string> out_names;
    std::vector<OutputType> types;
    for (const std::string& name : all_names) {
      if (name.empty()) continue;
      out_names.push_back(name);
      types.push_back(OpaqueOutputType(name));
    }
    for (const auto& c : SubgraphCaptures(node))
      if (ValueId v = graph_.FindValue(c); v != kNoValue) inputs.push_back(v);
    return graph_.AddOpaqueNode(std::make_shared<onnx::NodeProto>(node), inputs, out_names, types).status();
  }

  // An opaque node's output type: as ONNX inferred it, else as the file declares it, else
  // unknown (kept, but nothing computes on it).
  OutputType OpaqueOutputType(const std::string& name) const {
    if (auto it = known_.inferred.find(name); it != known_.inferred.end()) return it->second;
    if (auto it = known_.declared.find(name); it != known_.declared.end()) return it->second;
    auto et = known_.elem_types.find(name);
    return OutputType{et == known_.elem_types.end() ? DataType::kUndefined : et->second, Shape(),
                      /*shape_known=*/false};
  }

  const int opset_;
  const ImportOptions& options_;
  const KnownTypes known_;
  Graph& graph_;
};

// CheckStructure has found each graph output produced, and one at least.
absl::Status AddGraphOutputs(const onnx::GraphProto& g, Graph& graph) {
  for (const auto& out : g.output()) {
    ValueId v = graph.FindValue(out.name());
    if (v == kNoValue) return absl::InternalError(absl::StrCat("graph output '", out.name(), "' has no value"));
    RETURN_IF_ERROR(graph.AddOutput(v));
  }
  return absl::OkStatus();
}

// The model without its nodes, weights and value infos, for the export to write into.
// Inputs and outputs stay: their ValueInfoProtos are written back as they were.
std::shared_ptr<const onnx::ModelProto> ShellOf(const onnx::ModelProto& model) {
  return std::make_shared<onnx::ModelProto>(ShellCopy(model));
}

bool HasExternalData(const onnx::GraphProto& g) {
  for (const auto& init : g.initializer())
    if (init.data_location() == onnx::TensorProto::EXTERNAL) return true;
  return false;
}

// The model's graph, its inputs at `shapes` where named there, else at their static
// declared shapes; `known` says what ONNX knows of its types.
absl::StatusOr<OnnxModel> ImportGraph(const onnx::ModelProto& model, int opset, const ImportOptions& options,
                                      KnownTypes known, const InputShapes& shapes = {}) {
  const onnx::GraphProto& g = model.graph();
  RETURN_IF_ERROR(CheckDeclaredMemory(g, shapes, options.max_memory_bytes));
  OnnxModel result;
  result.opset = opset;
  NodeImporter nodes(opset, options, std::move(known), result.graph);
  absl::flat_hash_set<std::string> outer;  // the names defined outside the nodes
  RETURN_IF_ERROR(AddWeightsAndInputs(g, options, shapes, result.graph, outer));
  ASSIGN_OR_RETURN(std::vector<int> order, SortNodes(g, outer));
  for (int index : order) RETURN_IF_ERROR(nodes.Add(g.node(index)));
  RETURN_IF_ERROR(AddGraphOutputs(g, result.graph));
  RETURN_IF_ERROR(CheckGraphMemory(result.graph, options.max_memory_bytes));
  result.shell = ShellOf(model);
  result.external_data = HasExternalData(g);
  if (result.external_data) result.external_data_dir = options.external_data_dir;
  return result;
}

// The model built at `shapes` as if they were its static input shapes: its shape
// arithmetic folded, so that a Reshape whose target is computed from a symbolic dimension
// (PyTorch's `x.view(b, t, h, d // h)`) has a known output there, as ONNX's inference
// cannot always tell (version 1.12 propagates no Div). Nothing where it cannot be built.
std::optional<OnnxModel> ImportedAsStatic(const onnx::ModelProto& model, int opset, const ImportOptions& options,
                                          const KnownTypes& known, const InputShapes& shapes) {
  if (!options.fold_shape_arithmetic) return std::nullopt;
  absl::StatusOr<OnnxModel> built = ImportGraph(model, opset, options, known, shapes);
  if (!built.ok()) return std::nullopt;
  return *std::move(built);
}

// The types the model built at its bound sizes gives values whose type ONNX's inference
// left unknown: what the symbolic model's opaque nodes (a Reshape to a computed target)
// produce at those sizes, so that the nodes reading them compute with the library. The
// written model keeps the opaque node, and each size the symbolic check builds at is
// typed the same way.
void AddTypesOfOpaqueOutputs(const Graph& at_bound_sizes, KnownTypes& known) {
  for (ValueId v = 0; v < at_bound_sizes.num_values(); ++v) {
    const Value& value = at_bound_sizes.value(v);
    if (value.name.empty() || !value.shape_known || known.inferred.contains(value.name)) continue;
    known.inferred.emplace(value.name, OutputType{value.dtype, value.shape, /*shape_known=*/true});
  }
}

// What the model built at its bound sizes folded (shape arithmetic made constants), as
// initializers: the nodes that compute them are left out of `copy`, so that ONNX's
// inference reads their values, and so are the file's declared types of them (ONNX's
// inference would take a declaration of no shape, or of a symbolic one, over the
// initializer's). False where nothing was folded.
bool FoldedAsInitializers(const Graph& at_bound_sizes, onnx::ModelProto& copy) {
  auto* nodes = copy.mutable_graph()->mutable_node();
  absl::flat_hash_set<std::string> folded;
  for (int i = nodes->size() - 1; i >= 0; --i) {
    const onnx::NodeProto& node = nodes->Get(i);
    // A Constant node ONNX reads itself.
    if (node.output_size() != 1 || node.op_type() == op_names::kConstant) continue;
    const ValueId v = at_bound_sizes.FindValue(node.output(0));
    if (v == kNoValue || at_bound_sizes.value(v).producer == kNoNode) continue;
    if (at_bound_sizes.node(at_bound_sizes.value(v).producer).op != ops::ConstantOp()) continue;
    const TensorData* data = at_bound_sizes.ConstantData(v);
    if (data == nullptr) continue;
    TensorToProto(*data, node.output(0), copy.mutable_graph()->add_initializer());
    folded.insert(node.output(0));
    nodes->DeleteSubrange(i, 1);
  }
  auto* declared = copy.mutable_graph()->mutable_value_info();
  declared->erase(std::remove_if(declared->begin(), declared->end(),
                                 [&](const onnx::ValueInfoProto& vi) { return folded.contains(vi.name()); }),
                  declared->end());
  return !folded.empty();
}

// ONNX's inference again at the bound sizes, reading the values the static build folded:
// it then types what it cannot from shape arithmetic it does not propagate (an Expand to
// a target PyTorch computes with Equal and Where, for `expand(n, -1, -1)`), and what
// follows. Types are added only where none is known. False where the inference ran and
// gave nothing (it threw, died or ran out of time): no later round tries it again.
bool AddTypesInferredFromFolds(const onnx::ModelProto& model, int opset, const InputShapes& shapes,
                               const Graph& at_bound_sizes, KnownTypes& known) {
  onnx::ModelProto copy = CopyToInfer(model, opset, shapes);
  if (!FoldedAsInitializers(at_bound_sizes, copy) || !SafeForOnnxInference(copy.graph(), opset)) return true;
  if (!InferShapesIsolated(&copy)) return false;
  AddStaticTypes(copy.graph(), known.inferred);
  return true;
}

// Builds at the bound sizes before the most types are known, then goes on.
constexpr int kTypingRounds = 16;

// Types what a symbolic model computes at its bound sizes where ONNX's inference alone
// cannot, in rounds: each builds the model as if static (ImportedAsStatic) with the types
// known so far and adds what that build and ONNX's inference over its folded values give,
// until a round adds nothing. A type found in one round lets the next build compute and
// fold past it (ViT's class token is expanded to a computed target, and the attention's
// slices read bounds from the shapes after it). Returns the last build, whose weights the
// symbolic build shares.
std::optional<OnnxModel> TypedAtBoundSizes(const onnx::ModelProto& model, int opset, const ImportOptions& options,
                                           const InputShapes& shapes, KnownTypes& known) {
  std::optional<OnnxModel> built;
  for (int round = 0; round < kTypingRounds; ++round) {
    ImportOptions sharing = options;
    if (built && sharing.shared_weights == nullptr) sharing.shared_weights = &built->graph;
    std::optional<OnnxModel> next = ImportedAsStatic(model, opset, sharing, known, shapes);
    if (!next) break;
    built = std::move(next);
    const size_t typed = known.inferred.size();
    AddTypesOfOpaqueOutputs(built->graph, known);
    const bool inferred = AddTypesInferredFromFolds(model, opset, shapes, built->graph, known);
    if (!inferred || known.inferred.size() == typed) break;
  }
  return built;
}

// True where some value's shape is unknown.
bool HasUnknownShapes(const Graph& graph) {
  for (ValueId v = 0; v < graph.num_values(); ++v)
    if (!graph.value(v).shape_known) return true;
  return false;
}

// A model of static input shapes. Where its shape arithmetic folds but ONNX's inference
// left some value's type unknown (torchvision's Swin pads each map by `(w - W % w) % w`
// and builds its attention mask with ScatterND on Range, which ONNX 1.12 does not
// propagate), it is built again, in rounds, with what ONNX's inference gives over the
// folded values (AddTypesInferredFromFolds), until a round adds nothing.
absl::StatusOr<OnnxModel> ImportStatic(const onnx::ModelProto& model, int opset, const ImportOptions& options) {
  KnownTypes known = KnownTypesOf(model, opset);
  ASSIGN_OR_RETURN(OnnxModel built, ImportGraph(model, opset, options, known));
  for (int round = 1; round < kTypingRounds && options.fold_shape_arithmetic && HasUnknownShapes(built.graph);
       ++round) {
    const size_t typed = known.inferred.size();
    if (!AddTypesInferredFromFolds(model, opset, {}, built.graph, known) || known.inferred.size() == typed) break;
    ImportOptions sharing = options;
    if (sharing.shared_weights == nullptr) sharing.shared_weights = &built.graph;
    absl::StatusOr<OnnxModel> next = ImportGraph(model, opset, sharing, known);
    // Sizes now known beyond the memory limit refuse the model, as reading the file
    // written would (it holds the folded values); on any other failure the last build
    // stands: the types only help it.
    if (absl::IsResourceExhausted(next.status())) return next.status();
    if (!next.ok()) break;
    built = *std::move(next);
  }
  return built;
}

// A model with symbolic input dimensions, built at the sizes `bound` gives them; the
// model as read is kept to build it at others.
absl::StatusOr<OnnxModel> ImportSymbolic(const onnx::ModelProto& model, int opset, const ImportOptions& options,
                                         const BoundInputs& bound) {
  KnownTypes known = KnownTypesOf(model, opset, bound.shapes);
  const std::optional<OnnxModel> at_bound_sizes = TypedAtBoundSizes(model, opset, options, bound.shapes, known);
  ImportOptions sharing = options;
  if (at_bound_sizes && sharing.shared_weights == nullptr) sharing.shared_weights = &at_bound_sizes->graph;
  known.dynamic = DynamicValues(model, opset);
  ASSIGN_OR_RETURN(OnnxModel result, ImportGraph(model, opset, sharing, std::move(known), bound.shapes));
  if (options.keep_source) result.source = std::make_shared<onnx::ModelProto>(model);
  result.symbolic_dims = bound.dims;
  result.shapeless_inputs = bound.shapeless;
  return result;
}

// The model's structure is checked first (CheckStructure). A model with symbolic input dimensions is imported at the
// sizes bound to them (BuiltAtGrownSizes where it does not build at 1); what depends on them is not folded.
// Calls of model-local functions are left as they are (ImportOnnx inlines them first).
absl::StatusOr<OnnxModel> ImportModel(const onnx::ModelProto& model, const ImportOptions& options) {
  ASSIGN_OR_RETURN(const int opset, DefaultOpset(model));
  RETURN_IF_ERROR(CheckStructure(model, opset));  // before any of ONNX's code sees the model
  if (opset < kMinOpset) {
    ASSIGN_OR_RETURN(const onnx::ModelProto converted, ConvertedToMinOpset(model, opset));
    ASSIGN_OR_RETURN(OnnxModel result, ImportModel(converted, options));
    result.converted_from_opset = opset;
    return result;
  }
  ASSIGN_OR_RETURN(const BoundInputs bound, BindInputShapes(model.graph(), options.input_shapes));
  if (bound.dims.empty()) return ImportStatic(model, opset, options);
  const BuildAtSizes build = [&](const BoundInputs& sizes) { return ImportSymbolic(model, opset, options, sizes); };
  absl::StatusOr<OnnxModel> at_one = build(bound);
  if (at_one.ok()) return at_one;
  return BuiltAtGrownSizes(bound, at_one.status(), build);
}

// ImportModel, again without the file's stale declarations where a library operator's
// output contradicts one (onnx_stale_declarations.h). A model whose input dimension was
// made symbolic by hand keeps declarations at the old size: they hold where it is built
// at that size and are found stale where the symbolic check builds it at others.
absl::StatusOr<OnnxModel> ImportModelOverStaleDeclarations(const onnx::ModelProto& model,
                                                           const ImportOptions& options) {
  absl::StatusOr<OnnxModel> result = ImportModel(model, options);
  if (result.ok() || !IsStaleDeclarationError(result.status())) return result;
  std::vector<StaleDeclaration> stale = FindStaleDeclarations(model, options.input_shapes);
  if (stale.empty()) return result;
  onnx::ModelProto fixed = model;
  DropStaleDeclarations(stale, fixed);
  absl::StatusOr<OnnxModel> again = ImportModel(fixed, options);
  if (again.ok()) again->stale_declarations = std::move(stale);
  return again;
}

}  // namespace

absl::StatusOr<OnnxModel> ImportOnnx(const onnx::ModelProto& model, const ImportOptions& options) {
  if (!model.has_graph()) return absl::InvalidArgumentError("the model has no graph");
  if (HasUncommonSpellings(model)) {
    onnx::ModelProto common = model;
    ASSIGN_OR_RETURN(std::vector<std::string> made_dense,
                     CommonSpellings(common, options.external_data_dir, options.max_memory_bytes));
    ASSIGN_OR_RETURN(OnnxModel result, ImportOnnx(common, options));
    result.sparse_made_dense = std::move(made_dense);
    return result;
  }
  if (!CallsLocalFunction(model)) return ImportModelOverStaleDeclarations(model, options);
  // Inlined into a copy without the weights, which are copied in only where a call is
  // inlined.
  onnx::ModelProto inlined = CopyWithoutInitializers(model);
  InlinedFunctions report = InlineLocalFunctions(inlined);
  if (report.calls > 0) *inlined.mutable_graph()->mutable_initializer() = model.graph().initializer();
  ASSIGN_OR_RETURN(OnnxModel result, ImportModelOverStaleDeclarations(report.calls > 0 ? inlined : model, options));
  result.inlined_functions = std::move(report);
  return result;
}

absl::StatusOr<onnx::ModelProto> ReadModelFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is a directory, not an ONNX file"));
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat("cannot open '", path, "': no such readable file"));
  // Parsed as it is read, a megabyte at a time (a pipe too): the file's bytes are never
  // held beside the message, which took twice a model's size to read it.
  constexpr int kBlockBytes = 1 << 20;
  google::protobuf::io::FileInputStream stream(fd, kBlockBytes);
  stream.SetCloseOnDelete(true);
  onnx::ModelProto model;
  const bool parsed = model.ParseFromZeroCopyStream(&stream);
  if (stream.GetErrno() != 0)
    return absl::NotFoundError(absl::StrCat("cannot read '", path, "' (", std::strerror(stream.GetErrno()), ")"));
  if (stream.ByteCount() == 0)
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is empty, not an ONNX model"));
  if (!parsed)
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' is not an ONNX model (it does not parse; truncated or another format?)"));
  if (!model.has_graph() || model.opset_import_size() == 0 || model.ir_version() <= 0)
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' is not a complete ONNX model (no graph, IR version or opset import; truncated?)"));
  return model;
}

namespace {

// External tensors inside nodes (a Constant's value, a subgraph's initializers) read into
// them: a node kept opaque is written as it was read, wherever the model is written, so its
// tensors must hold their values.
absl::Status ReadNodeExternalData(onnx::ModelProto& model, const std::string& dir) {
  const VisitTensor read = [&dir](onnx::TensorProto& t) -> absl::Status {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) return absl::OkStatus();
    ASSIGN_OR_RETURN(t, WithExternalDataRead(t, dir));
    return absl::OkStatus();
  };
  for (onnx::NodeProto& n : *model.mutable_graph()->mutable_node()) RETURN_IF_ERROR(ForEachTensor(n, read));
  for (onnx::FunctionProto& f : *model.mutable_functions())
    for (onnx::NodeProto& n : *f.mutable_node()) RETURN_IF_ERROR(ForEachTensor(n, read));
  return absl::OkStatus();
}

}  // namespace

std::string ModelDirectory(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

absl::StatusOr<OnnxModel> ImportOnnxFile(const std::string& path, const ImportOptions& options) {
  ASSIGN_OR_RETURN(onnx::ModelProto model, ReadModelFile(path));
  return ImportModelRead(std::move(model), path, options);
}

absl::StatusOr<OnnxModel> ImportModelRead(onnx::ModelProto model, const std::string& path,
                                          const ImportOptions& options) {
  ImportOptions with_dir = options;
  if (with_dir.external_data_dir.empty()) with_dir.external_data_dir = ModelDirectory(path);
  RETURN_IF_ERROR(ReadNodeExternalData(model, with_dir.external_data_dir));
  // In place, so that the source kept has them too and is not a copy.
  std::vector<std::string> made_dense;
  if (HasUncommonSpellings(model)) {
    ASSIGN_OR_RETURN(made_dense, CommonSpellings(model, with_dir.external_data_dir, options.max_memory_bytes));
  }
  // Inlined in place, so that the source kept is the model inlined (it is built again at
  // other sizes) and its weights are not copied.
  InlinedFunctions inlined = InlineLocalFunctions(model);
  // The model read becomes the source itself rather than a copy where the import keeps it
  // as it is (not converted from an older opset).
  const absl::StatusOr<int> opset = DefaultOpset(model);
  const bool as_read = options.keep_source && opset.ok() && *opset >= kMinOpset;
  if (as_read) with_dir.keep_source = false;
  ASSIGN_OR_RETURN(OnnxModel imported, ImportOnnx(model, with_dir));
  if (inlined.calls > 0) imported.inlined_functions = std::move(inlined);
  if (!made_dense.empty()) imported.sparse_made_dense = std::move(made_dense);
  if (as_read) DropStaleDeclarations(imported.stale_declarations, model);
  if (as_read && !imported.symbolic_dims.empty())
    imported.source = std::make_shared<const onnx::ModelProto>(std::move(model));
  return imported;
}

}  // namespace taso
