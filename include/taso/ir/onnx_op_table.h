// One function per ONNX operator of the default domain, filled from the operators' files
// under ops/ at static initialization: the import's folding (onnx_fold.h), the sizes
// runtimes refuse (onnx_size_limit.h), the nodes ONNX's inference mishandles
// (onnx_inference_hazard.h). `Fn` is the kind's function pointer type, distinct per kind,
// so each kind has a table of its own.
#pragma once

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace taso {

template <typename Fn>
class OnnxOpTable {
 public:
  static void Register(const std::string& onnx_op, Fn fn) { Entries()[onnx_op] = fn; }
  // The operator's function, or null.
  static Fn Find(absl::string_view onnx_op) {
    auto it = Entries().find(onnx_op);
    return it == Entries().end() ? nullptr : it->second;
  }

 private:
  static absl::flat_hash_map<std::string, Fn>& Entries() {
    static auto* entries = new absl::flat_hash_map<std::string, Fn>();
    return *entries;
  }
};

}  // namespace taso
