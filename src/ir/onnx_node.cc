// The node views operators use to read and write their ONNX form.
#include "taso/ir/onnx_node.h"
#include "absl/strings/str_cat.h"
#include "onnx/onnx_pb.h"
#include "taso/ir/onnx_tensor.h"

namespace taso {

OnnxImportNode::OnnxImportNode(const onnx::NodeProto& node, int opset, std::vector<InputInfo> inputs)
    : node_(node), opset_(opset), inputs_(std::move(inputs)) {
  while (!inputs_.empty() && !inputs_.back().present) inputs_.pop_back();  // trailing absent optionals
}

int OnnxImportNode::num_outputs() const {
  int n = node_.output_size();
  while (n > 0 && node_.output(n - 1).empty()) --n;
  return n;
}

const onnx::AttributeProto* OnnxImportNode::Find(absl::string_view attr,
                                                 onnx::AttributeProto::AttributeType type) const {
  for (const auto& a : node_.attribute()) {
    if (a.name() != attr) continue;
    read_.insert(std::string(attr));
    if (a.type() == type) return &a;
    if (status_.ok())
      status_ = absl::InvalidArgumentError(absl::StrCat("attribute '", attr, "' should be ",
                                                        onnx::AttributeProto::AttributeType_Name(type), " but is ",
                                                        onnx::AttributeProto::AttributeType_Name(a.type())));
    return nullptr;
  }
  return nullptr;
}

bool OnnxImportNode::Has(absl::string_view attr) const {
  for (const auto& a : node_.attribute())
    if (a.name() == attr) return true;
  return false;
}

int64_t OnnxImportNode::Int(absl::string_view attr, int64_t def) const {
  const auto* a = Find(attr, onnx::AttributeProto::INT);
  return a ? a->i() : def;
}

double OnnxImportNode::Float(absl::string_view attr, double def) const {
  const auto* a = Find(attr, onnx::AttributeProto::FLOAT);
  return a ? a->f() : def;
}

std::string OnnxImportNode::Str(absl::string_view attr, absl::string_view def) const {
  const auto* a = Find(attr, onnx::AttributeProto::STRING);
  return a ? a->s() : std::string(def);
}

std::vector<int64_t> OnnxImportNode::Ints(absl::string_view attr, std::vector<int64_t> def) const {
  const auto* a = Find(attr, onnx::AttributeProto::INTS);
  if (!a) return def;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

TensorDataPtr OnnxImportNode::Tensor(absl::string_view attr) const {
  const auto* a = Find(attr, onnx::AttributeProto::TENSOR);
  if (!a) return nullptr;
  auto t = TensorFromProto(a->t());
  return t.ok() ? *t : nullptr;
}

bool OnnxImportNode::AllAttributesRead() const {
  for (const auto& a : node_.attribute())
    if (!read_.contains(a.name())) return false;
  return true;
}

OnnxExportNode::OnnxExportNode(onnx::GraphProto& graph, std::string node_name, std::vector<std::string> inputs,
                               std::vector<std::string> outputs, std::vector<InputInfo> input_infos,
                               std::vector<OutputType> output_types, int opset,
                               absl::flat_hash_set<std::string>& used_names)
    : graph_(graph),
      name_(std::move(node_name)),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      input_infos_(std::move(input_infos)),
      output_types_(std::move(output_types)),
      opset_(opset),
      used_names_(used_names) {
  while (!inputs_.empty() && inputs_.back().empty()) inputs_.pop_back();
}

onnx::NodeProto* OnnxExportNode::AddNode(absl::string_view op_type, const std::vector<std::string>& inputs,
                                         const std::vector<std::string>& outputs) {
  onnx::NodeProto* n = graph_.add_node();
  n->set_op_type(std::string(op_type));
  n->set_name(added_++ == 0 ? name_ : NewName(name_));
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

std::string OnnxExportNode::NewName(absl::string_view hint) {
  std::string name(hint);
  for (int i = 1; used_names_.contains(name); ++i) name = absl::StrCat(hint, "_", i);
  used_names_.insert(name);
  return name;
}

std::string OnnxExportNode::AddInitializer(absl::string_view hint, const TensorData& data) {
  std::string name = NewName(hint);
  TensorToProto(data, name, graph_.add_initializer());
  return name;
}

namespace {
onnx::AttributeProto* NewAttr(onnx::NodeProto* n, absl::string_view name, onnx::AttributeProto::AttributeType t) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(std::string(name));
  a->set_type(t);
  return a;
}
}  // namespace

void OnnxExportNode::SetInt(onnx::NodeProto* n, absl::string_view name, int64_t v) {
  NewAttr(n, name, onnx::AttributeProto::INT)->set_i(v);
}
void OnnxExportNode::SetFloat(onnx::NodeProto* n, absl::string_view name, double v) {
  NewAttr(n, name, onnx::AttributeProto::FLOAT)->set_f(static_cast<float>(v));
}
void OnnxExportNode::SetStr(onnx::NodeProto* n, absl::string_view name, absl::string_view v) {
  NewAttr(n, name, onnx::AttributeProto::STRING)->set_s(std::string(v));
}
void OnnxExportNode::SetInts(onnx::NodeProto* n, absl::string_view name, const std::vector<int64_t>& v) {
  auto* a = NewAttr(n, name, onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
void OnnxExportNode::SetTensor(onnx::NodeProto* n, absl::string_view name, const TensorData& v) {
  TensorToProto(v, "", NewAttr(n, name, onnx::AttributeProto::TENSOR)->mutable_t());
}

}  // namespace taso
