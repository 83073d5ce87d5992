#include "taso/ir/graph_copy.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "taso/ir/status_macros.h"

namespace taso {

absl::Status GraphCopy::CopyInputs() {
  for (ValueId v : old_.inputs()) {
    const Value& value = old_.value(v);
    if (value.is_weight()) {
      ASSIGN_OR_RETURN(ValueId id, Use(v));
      RETURN_IF_ERROR(new_.MarkWeightAsInput(id));
    } else {
      ASSIGN_OR_RETURN(remap_[v], new_.AddInput(value.name, value.dtype, value.shape));
    }
  }
  return absl::OkStatus();
}

bool GraphCopy::Available(const std::vector<ValueId>& values) const {
  for (ValueId v : values)
    if (v != kNoValue && remap_[v] == kNoValue && !old_.value(v).is_weight() && !folded_.contains(v)) return false;
  return true;
}

absl::StatusOr<ValueId> GraphCopy::Use(ValueId v) {
  if (v == kNoValue) return kNoValue;
  if (remap_[v] == kNoValue) {
    if (const auto same = same_as_.find(v); same != same_as_.end()) {
      ASSIGN_OR_RETURN(remap_[v], Use(same->second));
      return remap_[v];
    }
    const Value& value = old_.value(v);
    const auto folded = folded_.find(v);
    if (folded == folded_.end() && !value.is_weight())
      return absl::InternalError(absl::StrCat("value ", value.name, " used before it is made"));
    ASSIGN_OR_RETURN(remap_[v], new_.AddWeight(value.name, folded == folded_.end() ? value.data : folded->second));
  }
  return remap_[v];
}

absl::Status GraphCopy::CopyNode(NodeId n) {
  const Node& node = old_.node(n);
  std::vector<ValueId> inputs;
  for (ValueId v : node.inputs) {
    ASSIGN_OR_RETURN(ValueId id, Use(v));
    inputs.push_back(id);
  }
  std::vector<std::string> names;
  for (ValueId v : node.outputs) names.push_back(old_.value(v).name);
  ASSIGN_OR_RETURN(std::vector<ValueId> outs, AddNodeLike(n, node.params, std::move(inputs), std::move(names)));
  for (size_t k = 0; k < outs.size(); ++k) remap_[node.outputs[k]] = outs[k];
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ValueId>> GraphCopy::AddNodeLike(NodeId n, Params params, std::vector<ValueId> inputs,
                                                            std::vector<std::string> names) {
  const Node& node = old_.node(n);
  if (node.op->is_opaque())
    return new_.AddOpaqueNode(node.onnx_node, std::move(inputs), std::move(names), old_.OutputTypes(node));
  return new_.AddNode(node.op, std::move(params), std::move(inputs), node.name, std::move(names));
}

std::string GraphCopy::FreshName(absl::string_view base, NameStyle style) {
  auto taken = [this](absl::string_view name) {
    return old_.FindValue(name) != kNoValue || new_.FindValue(name) != kNoValue || handed_out_.contains(name);
  };
  std::string name(base);
  if (style == NameStyle::kNumbered || taken(name)) {
    const int64_t first = style == NameStyle::kNumbered ? 0 : 2;
    int64_t& next = next_number_.try_emplace(name, first).first->second;
    next = std::max(next, first);
    name = NextFreeName(base, next, taken);
  }
  handed_out_.insert(name);
  return name;
}

absl::StatusOr<Graph> GraphCopy::Finish() {
  for (ValueId v : old_.outputs()) {
    ASSIGN_OR_RETURN(ValueId id, Use(v));
    RETURN_IF_ERROR(new_.AddOutput(id));
  }
  return std::move(new_);
}

}  // namespace taso
