#include "onnx_structure.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onnx/defs/schema.h"
#include "taso/ir/onnx_inference_hazard.h"
#include "taso/ir/onnx_node.h"
#include "taso/ir/status_macros.h"

namespace taso {

bool IsDefaultDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

namespace {

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

// Names read inside `g` (node inputs, graph outputs) that it does not define: outer-scope
// captures. `defined` holds what the enclosing subgraphs define.
void CollectCaptures(const onnx::GraphProto& g, absl::flat_hash_set<std::string>& defined,
                     std::vector<std::string>& captures) {
  for (const auto& i : g.input()) defined.insert(i.name());
  for (const auto& i : g.initializer()) defined.insert(i.name());
  for (const auto& n : g.node()) {
    for (const auto& in : n.input())
      if (!in.empty() && !defined.contains(in)) captures.push_back(in);
    ForEachSubgraph(n, [&](const onnx::GraphProto& sg) { CollectCaptures(sg, defined, captures); });
    for (const auto& out : n.output()) defined.insert(out);
  }
  for (const auto& out : g.output())
    if (!out.name().empty() && !defined.contains(out.name())) captures.push_back(out.name());
}

// The node producing each name; fails where a name is defined twice (or is also a graph
// input or initializer, which are in `outer`).
absl::StatusOr<absl::flat_hash_map<std::string, int>> Producers(const onnx::GraphProto& g,
                                                                const absl::flat_hash_set<std::string>& outer) {
  absl::flat_hash_map<std::string, int> producer;
  for (int i = 0; i < g.node_size(); ++i)
    for (const auto& out : g.node(i).output()) {
      if (out.empty()) continue;
      if (outer.contains(out) || !producer.emplace(out, i).second)
        return absl::InvalidArgumentError(
            absl::StrCat("tensor '", out, "' is defined more than once (by ", DescribeNode(g.node(i)), ")"));
    }
  return producer;
}

// The dependencies between nodes: which nodes read each node's outputs (subgraph
// captures included), and how many reads of a node's are produced by nodes.
struct Dependencies {
  std::vector<std::vector<int>> users;
  std::vector<int> pending;
};

// Fails where a node reads a name nothing defines.
absl::StatusOr<Dependencies> DependenciesOf(const onnx::GraphProto& g, const absl::flat_hash_set<std::string>& outer,
                                            const absl::flat_hash_map<std::string, int>& producer) {
  Dependencies d{std::vector<std::vector<int>>(g.node_size()), std::vector<int>(g.node_size(), 0)};
  for (int i = 0; i < g.node_size(); ++i) {
    std::vector<std::string> reads(g.node(i).input().begin(), g.node(i).input().end());
    for (auto& c : SubgraphCaptures(g.node(i))) reads.push_back(std::move(c));
    for (const auto& in : reads) {
      if (in.empty() || outer.contains(in)) continue;
      auto it = producer.find(in);
      if (it == producer.end())
        return absl::InvalidArgumentError(absl::StrCat(DescribeNode(g.node(i)), " reads '", in,
                                                       "', which no node, graph input or initializer produces"));
      d.users[it->second].push_back(i);
      ++d.pending[i];
    }
  }
  return d;
}

// The node has an op_type and names each single (neither optional nor variadic) output
// of its schema at `opset` (a node without a schema may omit any); so do the nodes of
// its subgraphs, whose outputs are named.
absl::Status CheckNode(const onnx::NodeProto& n, int opset) {
  if (n.op_type().empty()) return absl::InvalidArgumentError(absl::StrCat("node '", n.name(), "' has no op_type"));
  const onnx::OpSchema* schema =
      IsDefaultDomain(n.domain()) ? onnx::OpSchemaRegistry::Schema(n.op_type(), opset) : nullptr;
  const int formal_outputs = schema ? static_cast<int>(schema->outputs().size()) : 0;
  for (int i = 0; i < std::min(n.output_size(), formal_outputs); ++i) {
    const auto& formal = schema->outputs()[i];
    if (n.output(i).empty() && formal.GetOption() == onnx::OpSchema::Single)
      return absl::InvalidArgumentError(absl::StrCat(DescribeNode(n), ": output ", i, " ('", formal.GetName(),
                                                     "') has no name; only optional outputs may be omitted"));
  }
  absl::Status status;
  ForEachSubgraph(n, [&](const onnx::GraphProto& sg) {
    for (const auto& out : sg.output())
      if (status.ok() && out.name().empty())
        status = absl::InvalidArgumentError(
            absl::StrCat(DescribeNode(n), ": an output of its subgraph '", sg.name(), "' has no name"));
    for (const auto& inner : sg.node())
      if (status.ok()) status = CheckNode(inner, opset);
  });
  return status;
}

// "[4,4]", "[batch,4]", "[?]": a shape as declared.
std::string DeclaredShape(const onnx::TensorShapeProto& shape) {
  std::string text = "[";
  for (const auto& d : shape.dim())
    absl::StrAppend(&text, text.size() > 1 ? "," : "",
                    d.has_dim_value() ? absl::StrCat(d.dim_value()) : (d.dim_param().empty() ? "?" : d.dim_param()));
  return text + "]";
}

// A graph input that is also an initializer is declared as the initializer is: its element
// type, and where it declares a shape, the rank and each fixed size. ONNX Runtime refuses a
// file that differs; the import would type the value by the initializer and shape
// inference by the declaration, and check the model's nodes against neither.
absl::Status CheckInitializerMatchesInput(const onnx::TensorProto& init, const onnx::ValueInfoProto& in) {
  const onnx::TypeProto::Tensor& declared = in.type().tensor_type();
  const bool type_differs =
      declared.elem_type() != onnx::TensorProto::UNDEFINED && declared.elem_type() != init.data_type();
  bool shape_differs = false;
  if (declared.has_shape()) {
    shape_differs = declared.shape().dim_size() != init.dims_size();
    for (int i = 0; !shape_differs && i < init.dims_size(); ++i)
      shape_differs = declared.shape().dim(i).has_dim_value() && declared.shape().dim(i).dim_value() != init.dims(i);
  }
  if (!type_differs && !shape_differs) return absl::OkStatus();
  std::vector<std::string> init_dims;
  for (int64_t d : init.dims()) init_dims.push_back(absl::StrCat(d));
  return absl::InvalidArgumentError(
      absl::StrCat("graph input '", in.name(), "' is declared ",
                   onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(declared.elem_type())),
                   declared.has_shape() ? DeclaredShape(declared.shape()) : "", " but its initializer holds ",
                   onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(init.data_type())), "[",
                   absl::StrJoin(init_dims, ","), "]"));
}

// The names of the initializers and graph inputs, each named and none twice (an input
// may also be an initializer, declared as it is); no input dimension negative.
absl::StatusOr<absl::flat_hash_set<std::string>> OuterNames(const onnx::GraphProto& g) {
  absl::flat_hash_set<std::string> outer, inputs;
  absl::flat_hash_map<std::string, const onnx::TensorProto*> initializers;
  for (const auto& init : g.initializer()) {
    if (init.name().empty()) return absl::InvalidArgumentError("an initializer has no name");
    if (!outer.insert(init.name()).second)
      return absl::InvalidArgumentError(absl::StrCat("initializer '", init.name(), "' is defined more than once"));
    initializers[init.name()] = &init;
  }
  for (const auto& in : g.input()) {
    if (const auto init = initializers.find(in.name()); init != initializers.end())
      RETURN_IF_ERROR(CheckInitializerMatchesInput(*init->second, in));
    if (in.name().empty()) return absl::InvalidArgumentError("a graph input has no name");
    if (!inputs.insert(in.name()).second)
      return absl::InvalidArgumentError(absl::StrCat("graph input '", in.name(), "' is declared more than once"));
    for (const auto& d : in.type().tensor_type().shape().dim())
      if (d.has_dim_value() && d.dim_value() < 0)
        return absl::InvalidArgumentError(absl::StrCat("input '", in.name(), "' has a negative dimension"));
    outer.insert(in.name());
  }
  return outer;
}

// There is a graph output, and each is named and produced by a node or is in `outer`.
absl::Status CheckGraphOutputs(const onnx::GraphProto& g, const absl::flat_hash_set<std::string>& outer) {
  if (g.output_size() == 0) return absl::InvalidArgumentError("the graph has no outputs");
  absl::flat_hash_set<std::string> produced;
  for (const auto& n : g.node()) produced.insert(n.output().begin(), n.output().end());
  for (const auto& out : g.output()) {
    if (out.name().empty()) return absl::InvalidArgumentError("a graph output has no name");
    if (!produced.contains(out.name()) && !outer.contains(out.name()))
      return absl::InvalidArgumentError(absl::StrCat("graph output '", out.name(), "' is not produced by any node"));
  }
  return absl::OkStatus();
}

// Every node of `g` and its subgraphs is of the default domain, has a schema at `opset`
// and passes its checks.
absl::Status CheckNodesConvertible(const onnx::GraphProto& g, int opset) {
  for (const auto& n : g.node()) {
    if (!IsDefaultDomain(n.domain()))
      return absl::InvalidArgumentError(absl::StrCat(DescribeNode(n), " is of domain '", n.domain(),
                                                     "'; only the default ONNX domain is converted from opset ",
                                                     opset));
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(n.op_type(), opset);
    if (schema == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(DescribeNode(n), ": opset ", opset, " has no such operator"));
    try {
      schema->Verify(n);
    } catch (const std::exception& e) {
      return absl::InvalidArgumentError(
          absl::StrCat(DescribeNode(n), " is not valid at opset ", opset, ": ", FirstLine(e.what())));
    }
    absl::Status status;
    ForEachSubgraph(n, [&](const onnx::GraphProto& sg) {
      if (status.ok()) status = CheckNodesConvertible(sg, opset);
    });
    RETURN_IF_ERROR(status);
  }
  return absl::OkStatus();
}

// Every dimension `g` and its subgraphs declare fits an int, as the converter holds it.
absl::Status CheckDimensionsFitInt(const onnx::GraphProto& g) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  for (const auto* infos : {&g.input(), &g.output(), &g.value_info()})
    for (const auto& vi : *infos)
      for (const auto& d : vi.type().tensor_type().shape().dim())
        if (d.has_dim_value() && (d.dim_value() > kMax || d.dim_value() < -kMax))
          return absl::InvalidArgumentError(absl::StrCat("'", vi.name(), "' has dimension ", d.dim_value(),
                                                         ", beyond what ONNX's version converter holds (", kMax, ")"));
  absl::Status status;
  for (const auto& n : g.node())
    ForEachSubgraph(n, [&](const onnx::GraphProto& sg) {
      if (status.ok()) status = CheckDimensionsFitInt(sg);
    });
  return status;
}

}  // namespace

void ForEachSubgraph(const onnx::NodeProto& n, const std::function<void(const onnx::GraphProto&)>& visit) {
  for (const auto& a : n.attribute()) {
    if (a.has_g()) visit(a.g());
    for (const auto& sg : a.graphs()) visit(sg);
  }
}

std::string DescribeNode(const onnx::NodeProto& n) { return absl::StrCat("node '", n.name(), "' (", n.op_type(), ")"); }

std::vector<std::string> SubgraphCaptures(const onnx::NodeProto& n) {
  std::vector<std::string> captures;
  ForEachSubgraph(n, [&](const onnx::GraphProto& sg) {
    absl::flat_hash_set<std::string> defined;
    CollectCaptures(sg, defined, captures);
  });
  return captures;
}

absl::StatusOr<std::vector<int>> SortNodes(const onnx::GraphProto& g, const absl::flat_hash_set<std::string>& outer) {
  ASSIGN_OR_RETURN(const auto producer, Producers(g, outer));
  ASSIGN_OR_RETURN(Dependencies d, DependenciesOf(g, outer, producer));
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;  // keeps the file's order where it can
  for (int i = 0; i < g.node_size(); ++i)
    if (d.pending[i] == 0) ready.push(i);
  std::vector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : d.users[i])
      if (--d.pending[u] == 0) ready.push(u);
  }
  if (order.size() != static_cast<size_t>(g.node_size()))
    for (int i = 0; i < g.node_size(); ++i)
      if (d.pending[i] > 0)
        return absl::InvalidArgumentError(absl::StrCat("graph has a cycle through ", DescribeNode(g.node(i))));
  return order;
}

absl::StatusOr<int> DefaultOpset(const onnx::ModelProto& model) {
  int opset = -1;
  for (const auto& o : model.opset_import())
    if (IsDefaultDomain(o.domain())) opset = static_cast<int>(o.version());
  if (opset < 1) return absl::InvalidArgumentError("the model does not import the default ONNX opset");
  if (opset > kMaxOpset)
    return absl::InvalidArgumentError(absl::StrCat("unsupported opset ", opset, " (supported: ", kMinOpset, " to ",
                                                   kMaxOpset, "; older ones are converted)"));
  return opset;
}

absl::Status CheckStructure(const onnx::ModelProto& model, int opset) {
  int default_imports = 0;
  for (const auto& o : model.opset_import()) default_imports += IsDefaultDomain(o.domain());
  if (default_imports > 1) return absl::InvalidArgumentError("the model imports the default ONNX opset more than once");
  const onnx::GraphProto& g = model.graph();
  ASSIGN_OR_RETURN(const absl::flat_hash_set<std::string> outer, OuterNames(g));
  for (const auto& n : g.node()) RETURN_IF_ERROR(CheckNode(n, opset));
  RETURN_IF_ERROR(SortNodes(g, outer).status());
  return CheckGraphOutputs(g, outer);
}

absl::Status CheckConvertible(const onnx::ModelProto& model, int opset) {
  RETURN_IF_ERROR(CheckNodesConvertible(model.graph(), opset));
  return CheckDimensionsFitInt(model.graph());
}

bool SafeForOnnxInference(const onnx::GraphProto& g, int opset) {
  for (const auto& n : g.node()) {
    if (const onnx::OpSchema* schema =
            IsDefaultDomain(n.domain()) ? onnx::OpSchemaRegistry::Schema(n.op_type(), opset) : nullptr) {
      try {
        schema->Verify(n);
      } catch (const std::exception&) {
        return false;
      }
      if (const OnnxInferenceHazard hazard = FindOnnxInferenceHazard(n.op_type()); hazard && hazard(n)) return false;
    }
    for (const auto& a : n.attribute()) {
      if (a.name() == "strides" && std::any_of(a.ints().begin(), a.ints().end(), [](int64_t s) { return s <= 0; }))
        return false;
      if (a.has_g() && !SafeForOnnxInference(a.g(), opset)) return false;
      for (const auto& sg : a.graphs())
        if (!SafeForOnnxInference(sg, opset)) return false;
    }
  }
  return true;
}

}  // namespace taso
