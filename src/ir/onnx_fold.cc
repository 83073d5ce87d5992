#include "taso/ir/onnx_fold.h"

#include "absl/container/flat_hash_map.h"

namespace taso {
namespace {

absl::flat_hash_map<std::string, OnnxFolder>& Folders() {
  static auto* folders = new absl::flat_hash_map<std::string, OnnxFolder>();
  return *folders;
}

}  // namespace

void RegisterOnnxFolder(const std::string& onnx_op, OnnxFolder fold) { Folders()[onnx_op] = fold; }

OnnxFolder FindOnnxFolder(absl::string_view onnx_op) {
  auto it = Folders().find(onnx_op);
  return it == Folders().end() ? nullptr : it->second;
}

}  // namespace taso
