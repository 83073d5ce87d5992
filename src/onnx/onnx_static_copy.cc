#include "taso/onnx/onnx_static_copy.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "taso/ir/status_macros.h"

namespace taso {

std::string FirstOpaqueNode(const Graph& graph) {
  for (NodeId n = 0; n < graph.num_nodes(); ++n)
    if (const Node& node = graph.node(n); node.op->is_opaque())
      return absl::StrCat("node '", node.name, "' (", node.onnx_node ? node.onnx_node->op_type() : "?", ")");
  return "";
}

absl::StatusOr<Graph> RunnableAtItsSizes(const OnnxModel& model, const ImportOptions& base) {
  if (FirstOpaqueNode(model.graph).empty()) return model.graph;
  ASSIGN_OR_RETURN(const onnx::ModelProto written, ExportOnnxWithoutWeights(model));
  ImportOptions options = base;
  // Dimensions the model would write symbolic are read at the graph's sizes.
  options.input_shapes.clear();
  for (ValueId id : model.graph.inputs())
    if (const Value& v = model.graph.value(id); v.shape_known && !v.is_weight()) options.input_shapes[v.name] = v.shape;
  options.fold_shape_arithmetic = true;
  options.shared_weights = &model.graph;
  options.weights_left_out = true;
  options.keep_source = false;
  options.external_data_dir = model.external_data_dir;
  ASSIGN_OR_RETURN(OnnxModel built, ImportOnnx(written, options));
  if (const std::string opaque = FirstOpaqueNode(built.graph); !opaque.empty())
    return absl::FailedPreconditionError(
        absl::StrCat(opaque, " is outside the operator library, even with the shape arithmetic folded at the sizes ",
                     "the model is built at"));
  return std::move(built.graph);
}

}  // namespace taso
