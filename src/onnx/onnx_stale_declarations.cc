#include "onnx_stale_declarations.h"

#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/cord.h"
#include "onnx_static_type.h"
#include "taso/onnx/onnx_input_shapes.h"
#include "taso/onnx/onnx_isolated_inference.h"
#include "taso/onnx/onnx_model_copy.h"

namespace taso {

namespace {

constexpr char kStalePayload[] = "taso/stale-declaration";

// The shapes ONNX's inference gives the values of `model`'s main graph with its inputs at
// `input_shapes` where named there, declarations (value_info, the outputs' shapes) left
// out so that none is taken for a result.
absl::flat_hash_map<std::string, Shape> InferredWithoutDeclarations(
    const onnx::ModelProto& model, const absl::flat_hash_map<std::string, Shape>& input_shapes) {
  onnx::ModelProto copy = CopyForShapeInference(model);
  SetInputShapes(input_shapes, copy);
  onnx::GraphProto& g = *copy.mutable_graph();
  g.clear_value_info();
  for (auto& out : *g.mutable_output())
    if (out.type().has_tensor_type()) out.mutable_type()->mutable_tensor_type()->clear_shape();
  absl::flat_hash_map<std::string, Shape> shapes;
  if (!InferShapesIsolated(&copy)) return shapes;
  for (const auto* infos : {&g.value_info(), &g.output()})
    for (const auto& vi : *infos)
      if (std::optional<Shape> s = StaticShape(vi.type())) shapes.emplace(vi.name(), *std::move(s));
  return shapes;
}

}  // namespace

absl::Status StaleDeclarationError(const std::string& message) {
  absl::Status status = absl::InvalidArgumentError(message);
  status.SetPayload(kStalePayload, absl::Cord("1"));
  return status;
}

bool IsStaleDeclarationError(const absl::Status& status) { return status.GetPayload(kStalePayload).has_value(); }

std::vector<StaleDeclaration> FindStaleDeclarations(const onnx::ModelProto& model,
                                                    const absl::flat_hash_map<std::string, Shape>& input_shapes) {
  std::vector<StaleDeclaration> stale;
  bool any = false;  // a static declaration to check
  for (const auto* infos : {&model.graph().value_info(), &model.graph().output()})
    for (const auto& vi : *infos) any = any || StaticShape(vi.type()).has_value();
  if (!any) return stale;
  const absl::flat_hash_map<std::string, Shape> computed = InferredWithoutDeclarations(model, input_shapes);
  auto check = [&](const onnx::ValueInfoProto& vi, bool graph_output) {
    const std::optional<Shape> declared = StaticShape(vi.type());
    const auto it = computed.find(vi.name());
    if (declared && it != computed.end() && it->second != *declared)
      stale.push_back({vi.name(), *declared, it->second, graph_output});
  };
  for (const auto& vi : model.graph().value_info()) check(vi, false);
  for (const auto& vi : model.graph().output()) check(vi, true);
  return stale;
}

void DropStaleDeclarations(const std::vector<StaleDeclaration>& stale, onnx::ModelProto& model) {
  absl::flat_hash_map<std::string, const StaleDeclaration*> by_name;
  for (const StaleDeclaration& s : stale) by_name.emplace(s.name, &s);
  onnx::GraphProto& g = *model.mutable_graph();
  auto* infos = g.mutable_value_info();
  for (int i = infos->size() - 1; i >= 0; --i)
    if (by_name.contains(infos->Get(i).name())) infos->DeleteSubrange(i, 1);
  for (auto& out : *g.mutable_output()) {
    const auto it = by_name.find(out.name());
    if (it == by_name.end() || !it->second->graph_output) continue;
    onnx::TensorShapeProto* shape = out.mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    for (int64_t d : it->second->computed) shape->add_dim()->set_dim_value(d);
  }
}

}  // namespace taso
