#include "pipeline/graph_fingerprint.h"

#include <openssl/evp.h>

#include <algorithm>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onnx/onnx_pb.h"

namespace taso::pipeline {

namespace {

std::string Sha256(absl::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(digest), size);
}

std::string TypeText(DataType dtype, const Shape& shape) {
  return absl::StrCat(DataTypeName(dtype), ShapeToString(shape));
}

std::string WeightDigest(const TensorData& data) {
  const absl::Span<const float> floats = data.floats();
  const absl::Span<const int64_t> ints = data.ints();
  const absl::string_view bytes =
      !floats.empty() ? absl::string_view(reinterpret_cast<const char*>(floats.data()), floats.size() * sizeof(float))
      : !ints.empty() ? absl::string_view(reinterpret_cast<const char*>(ints.data()), ints.size() * sizeof(int64_t))
                      : absl::string_view(data.raw_proto());
  return Sha256(absl::StrCat("weight ", TypeText(data.dtype(), data.shape()), " ", Sha256(bytes)));
}

}  // namespace

std::string GraphFingerprint(const Graph& graph) {
  const absl::StatusOr<std::vector<NodeId>> order = graph.TopologicalOrder();
  if (!order.ok()) return "";
  std::vector<std::string> digest(graph.num_values());
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const Value& input = graph.value(graph.inputs()[i]);
    digest[graph.inputs()[i]] = Sha256(absl::StrCat("input ", i, " ", TypeText(input.dtype, input.shape)));
  }
  for (ValueId v = 0; v < graph.num_values(); ++v)
    if (graph.value(v).is_constant()) digest[v] = WeightDigest(*graph.value(v).data);
  std::vector<std::string> nodes;
  for (NodeId n : *order) {
    const Node& node = graph.node(n);
    std::string text = absl::StrCat(node.op->name(), " ", node.params.ToString());
    if (node.onnx_node) absl::StrAppend(&text, " ", node.onnx_node->SerializeAsString());
    for (ValueId in : node.inputs) absl::StrAppend(&text, " ", in == kNoValue ? "-" : digest[in]);
    nodes.push_back(Sha256(text));
    for (size_t j = 0; j < node.outputs.size(); ++j) digest[node.outputs[j]] = Sha256(absl::StrCat(nodes.back(), j));
  }
  std::sort(nodes.begin(), nodes.end());  // dead ends count too, whatever the order
  std::string all = absl::StrJoin(nodes, "");
  for (ValueId out : graph.outputs()) absl::StrAppend(&all, "out", digest[out]);
  return absl::BytesToHexString(Sha256(all));
}

}  // namespace taso::pipeline
