#include "pipeline/change_summary.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onnx/onnx_pb.h"
#include "taso/egraph/engine.h"
#include "taso/passes/einsum_products.h"
#include "taso/passes/rewrite_gated_mixtures.h"

namespace taso::pipeline {

namespace {

// ONNX's name of an element type, in lower case: float16, bfloat16, int64.
std::string ElementTypeName(DataType t) {
  const int number = static_cast<int>(t);
  if (!onnx::TensorProto::DataType_IsValid(number)) return absl::StrCat("element type ", number);
  return absl::AsciiStrToLower(onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(number)));
}

// Why the importer kept this node opaque, in the order it decides.
std::string WhyOpaque(const Graph& graph, const Node& node) {
  const onnx::NodeProto& proto = *node.onnx_node;
  for (const onnx::AttributeProto& a : proto.attribute())
    if (a.has_g() || a.graphs_size() > 0) return "holds subgraphs, which are not searched";
  const bool default_domain = proto.domain().empty() || proto.domain() == "ai.onnx";
  if (!default_domain || OpRegistry::Global().ForOnnxType(proto.op_type()).empty())
    return "not in the operator library";
  if (!node.inputs.empty() && node.inputs[0] != kNoValue) {
    const Value& first = graph.value(node.inputs[0]);
    if (first.dtype != DataType::kFloat32) return absl::StrCat("computes on ", ElementTypeName(first.dtype));
  }
  for (ValueId v : node.inputs)
    if (v != kNoValue && !graph.value(v).shape_known) return "reads a tensor of unknown shape";
  return "attributes or inputs the library does not represent";
}

std::string SideForm(const RuleGraph& side) {
  std::vector<std::string> ops;
  for (const RuleOp& op : side.ops) ops.emplace_back(op.op->name());
  return ops.empty() ? "(its input)" : absl::StrJoin(ops, ", ");
}

}  // namespace

std::map<std::string, std::map<std::string, int>> LeftAlone(const Graph& graph) {
  std::map<std::string, std::map<std::string, int>> left;
  for (NodeId n = 0; n < graph.num_nodes(); ++n)
    if (const Node& node = graph.node(n); node.op->is_opaque() && node.onnx_node)
      ++left[WhyOpaque(graph, node)][node.onnx_node->op_type()];
  return left;
}

bool HasLibraryComputation(const Graph& graph) {
  for (NodeId n = 0; n < graph.num_nodes(); ++n)
    if (const Node& node = graph.node(n); !node.op->is_opaque() && !node.inputs.empty()) return true;
  return false;
}

std::map<std::string, std::string> RuleForms(const std::vector<Rule>& rules,
                                             const std::map<std::string, int>& applied) {
  std::map<std::string, std::string> forms;
  for (const auto& [name, count] : applied) {
    const AppliedRuleName applied_name = ParseAppliedRuleName(name);
    auto rule = std::find_if(rules.begin(), rules.end(), [&](const Rule& r) { return r.name == applied_name.rule; });
    if (rule == rules.end()) continue;
    const RuleGraph& from = applied_name.reversed ? rule->target : rule->source;
    const RuleGraph& to = applied_name.reversed ? rule->source : rule->target;
    forms[name] = absl::StrCat(SideForm(from), " -> ", SideForm(to));
  }
  return forms;
}

std::string AlternativeName(absl::string_view pricing) {
  if (pricing == kGatedMixturesMerged) return "the graph with its gated mixtures merged";
  if (pricing == kEinsumsAsProducts) return "the graph with its einsums computed as matrix products";
  if (pricing == kSearchWithEinsumsAsProducts) return "the search's graph with its einsums computed as matrix products";
  if (pricing == egraph::kOperatorsCountedPricing)
    return "the e-graph's extraction by analytic costs with each operator at the input's mean price";
  return absl::StrCat("the e-graph's extraction by ", pricing, " costs");
}

}  // namespace taso::pipeline
