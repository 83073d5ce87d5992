#include "onnx_tensor_walk.h"

#include "taso/ir/status_macros.h"

namespace taso {

namespace {

// A sparse tensor's values and indices, where it has them (visiting adds none).
absl::Status ForEachSparseTensorPart(onnx::SparseTensorProto& sparse, const VisitTensor& visit) {
  if (sparse.has_values()) RETURN_IF_ERROR(visit(*sparse.mutable_values()));
  if (sparse.has_indices()) RETURN_IF_ERROR(visit(*sparse.mutable_indices()));
  return absl::OkStatus();
}

}  // namespace

absl::Status ForEachTensor(onnx::NodeProto& node, const VisitTensor& visit) {
  for (onnx::AttributeProto& a : *node.mutable_attribute()) {
    if (a.has_t()) RETURN_IF_ERROR(visit(*a.mutable_t()));
    for (onnx::TensorProto& t : *a.mutable_tensors()) RETURN_IF_ERROR(visit(t));
    if (a.has_sparse_tensor()) RETURN_IF_ERROR(ForEachSparseTensorPart(*a.mutable_sparse_tensor(), visit));
    for (onnx::SparseTensorProto& s : *a.mutable_sparse_tensors()) RETURN_IF_ERROR(ForEachSparseTensorPart(s, visit));
    if (a.has_g()) RETURN_IF_ERROR(ForEachTensor(*a.mutable_g(), visit));
    for (onnx::GraphProto& sub : *a.mutable_graphs()) RETURN_IF_ERROR(ForEachTensor(sub, visit));
  }
  return absl::OkStatus();
}

absl::Status ForEachTensor(onnx::GraphProto& g, const VisitTensor& visit) {
  for (onnx::TensorProto& t : *g.mutable_initializer()) RETURN_IF_ERROR(visit(t));
  for (onnx::SparseTensorProto& s : *g.mutable_sparse_initializer()) RETURN_IF_ERROR(ForEachSparseTensorPart(s, visit));
  for (onnx::NodeProto& n : *g.mutable_node()) RETURN_IF_ERROR(ForEachTensor(n, visit));
  return absl::OkStatus();
}

absl::Status ForEachTensor(onnx::ModelProto& model, const VisitTensor& visit) {
  RETURN_IF_ERROR(ForEachTensor(*model.mutable_graph(), visit));
  for (onnx::FunctionProto& f : *model.mutable_functions())
    for (onnx::NodeProto& n : *f.mutable_node()) RETURN_IF_ERROR(ForEachTensor(n, visit));
  for (onnx::TrainingInfoProto& t : *model.mutable_training_info()) {
    if (t.has_initialization()) RETURN_IF_ERROR(ForEachTensor(*t.mutable_initialization(), visit));
    if (t.has_algorithm()) RETURN_IF_ERROR(ForEachTensor(*t.mutable_algorithm(), visit));
  }
  return absl::OkStatus();
}

}  // namespace taso
