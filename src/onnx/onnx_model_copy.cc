#include "taso/onnx/onnx_model_copy.h"

#include <optional>
#include <string>

#include "google/protobuf/field_mask.pb.h"
#include "google/protobuf/util/field_mask_util.h"
#include "taso/ir/tensor.h"

namespace taso {

namespace {

using google::protobuf::FieldMask;
using google::protobuf::util::FieldMaskUtil;

// Adds to `mask` every field of `type` (under `prefix`) but those named in `left_out`.
void AddFieldsBut(const google::protobuf::Descriptor& type, const std::string& prefix,
                  std::initializer_list<const char*> left_out, FieldMask& mask) {
  for (int i = 0; i < type.field_count(); ++i) {
    const std::string& name = type.field(i)->name();
    bool skip = false;
    for (const char* out : left_out) skip = skip || name == out;
    if (!skip) mask.add_paths(prefix + name);
  }
}

// `model` copied but for the graph fields named in `left_out`.
onnx::ModelProto CopyBut(const onnx::ModelProto& model, std::initializer_list<const char*> left_out) {
  FieldMask mask;
  AddFieldsBut(*onnx::ModelProto::descriptor(), "", {"graph"}, mask);
  if (model.has_graph()) AddFieldsBut(*onnx::GraphProto::descriptor(), "graph.", left_out, mask);
  onnx::ModelProto copy;
  FieldMaskUtil::MergeMessageTo(model, mask, FieldMaskUtil::MergeOptions(), &copy);
  return copy;
}

// Name, type and dimensions of `tensor`, without its values.
onnx::TensorProto Outline(const onnx::TensorProto& tensor) {
  onnx::TensorProto outline;
  outline.set_name(tensor.name());
  outline.set_data_type(tensor.data_type());
  *outline.mutable_dims() = tensor.dims();
  return outline;
}

}  // namespace

bool IsFloatingPoint(int data_type) {
  return data_type == onnx::TensorProto::FLOAT || data_type == onnx::TensorProto::DOUBLE ||
         data_type == onnx::TensorProto::FLOAT16 || data_type == onnx::TensorProto::BFLOAT16;
}

onnx::ModelProto ShellCopy(const onnx::ModelProto& model) {
  return CopyBut(model, {"node", "initializer", "value_info"});
}

onnx::ModelProto CopyWithoutInitializers(const onnx::ModelProto& model) { return CopyBut(model, {"initializer"}); }

onnx::ModelProto CopyForShapeInference(const onnx::ModelProto& model) {
  onnx::ModelProto copy = CopyBut(model, {"initializer"});
  if (!model.has_graph()) return copy;
  for (const onnx::TensorProto& tensor : model.graph().initializer()) {
    const std::optional<int64_t> elements = CheckedNumElements(tensor.dims());
    const bool large = IsFloatingPoint(tensor.data_type()) && (!elements || *elements > kLargeInitializerElements);
    *copy.mutable_graph()->add_initializer() = large ? Outline(tensor) : tensor;
  }
  return copy;
}

}  // namespace taso
