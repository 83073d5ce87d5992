#include "taso/ir/op.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "taso/ir/onnx_node.h"

namespace taso {

OpMetrics OpSemantics::Metrics(const Params&, absl::Span<const InputInfo> inputs,
                               absl::Span<const OutputType> outputs) const {
  OpMetrics m;
  for (const InputInfo& in : inputs)
    if (in.present) m.bytes += 4.0 * static_cast<double>(NumElements(in.shape));
  for (const OutputType& out : outputs) {
    m.bytes += 4.0 * static_cast<double>(NumElements(out.shape));
    m.flops += static_cast<double>(NumElements(out.shape));
  }
  return m;
}

DimSources OpRuleForm::DimensionSources(const Params&, absl::Span<const InputInfo>,
                                        absl::Span<const OutputType> outputs) const {
  DimSources d;
  for (const OutputType& o : outputs) d.emplace_back(o.shape.size());
  return d;
}

bool GeneratorVariant::AcceptsShapes(absl::Span<const Shape> inputs) const {
  if (static_cast<int>(inputs.size()) != arity) return false;
  for (int i = 0; i < arity; ++i) {
    if (roles[i] == GenRole::kScalar && !inputs[i].empty()) return false;
    if (roles[i] == GenRole::kTensor && inputs[i].empty()) return false;
    if (roles[i] == GenRole::kMatrix && inputs[i].size() != 2) return false;
    if (roles[i] == GenRole::kBias && inputs[i].size() != 1) return false;
    if (rank >= 0 && static_cast<int>(inputs[i].size()) != rank) return false;
  }
  return !same_shapes || arity < 2 || inputs[0] == inputs[1];
}

absl::Status OpSemantics::RunSymbolic(const Params&, KernelArgs<Sym>&) const {
  return absl::UnimplementedError(absl::StrCat(name(), " has no kernel in the symbolic domain"));
}

absl::StatusOr<SmtForm> OpRuleForm::Smt(const Params&, int, int) const {
  return absl::InvalidArgumentError(absl::StrCat("operator ", name(), " has no SMT encoding"));
}

absl::Status OnnxMapping::ToOnnx(const Params&, OnnxExportNode&) const {
  return absl::UnimplementedError(absl::StrCat("operator ", name(), " has no ONNX form"));
}

absl::StatusOr<std::optional<Params>> OnnxMapping::Import(OnnxImportNode& node) const {
  absl::StatusOr<std::optional<Params>> params = FromOnnx(node);
  if (params.ok() && !node.status().ok()) return node.status();
  return params;
}

OpRegistry& OpRegistry::Global() {
  static OpRegistry* registry = new OpRegistry();
  return *registry;
}

const OpDef* OpRegistry::Register(std::unique_ptr<OpDef> op) {
  ops_.push_back(std::move(op));
  return ops_.back().get();
}

const OpDef* OpRegistry::Find(absl::string_view name) const {
  for (const auto& op : ops_)
    if (op->name() == name) return op.get();
  return nullptr;
}

absl::StatusOr<const OpDef*> OpRegistry::Get(absl::string_view name) const {
  const OpDef* op = Find(name);
  if (op == nullptr) return absl::NotFoundError(absl::StrCat("unknown operator '", name, "'"));
  return op;
}

std::vector<const OpDef*> OpRegistry::ForOnnxType(absl::string_view op_type) const {
  std::vector<const OpDef*> out;
  for (const auto& op : ops_) {
    const std::vector<std::string> types = op->onnx().onnx_op_types();
    if (std::find(types.begin(), types.end(), op_type) != types.end()) out.push_back(op.get());
  }
  std::sort(out.begin(), out.end(), [](const OpDef* a, const OpDef* b) {
    const int pa = a->onnx().onnx_import_priority(), pb = b->onnx().onnx_import_priority();
    return pa != pb ? pa > pb : a->name() < b->name();
  });
  return out;
}

std::vector<const OpDef*> OpRegistry::All() const {
  std::vector<const OpDef*> out;
  for (const auto& op : ops_) out.push_back(op.get());
  return out;
}

const OpDef* OpRegistry::Opaque() const {
  for (const auto& op : ops_)
    if (op->is_opaque()) return op.get();
  return nullptr;
}

}  // namespace taso
