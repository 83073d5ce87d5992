#include "taso/ir/onnx_size_limit.h"

#include "absl/container/flat_hash_map.h"

namespace taso {
namespace {

absl::flat_hash_map<std::string, OnnxSizeLimit>& Limits() {
  static auto* limits = new absl::flat_hash_map<std::string, OnnxSizeLimit>();
  return *limits;
}

}  // namespace

void RegisterOnnxSizeLimit(const std::string& onnx_op, OnnxSizeLimit limit) { Limits()[onnx_op] = limit; }

OnnxSizeLimit FindOnnxSizeLimit(absl::string_view onnx_op) {
  auto it = Limits().find(onnx_op);
  return it == Limits().end() ? nullptr : it->second;
}

}  // namespace taso
