// Reading an ONNX node's attributes where the rules take the NodeProto itself (import
// folding, size limits), with the schema's default where the attribute is absent.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace taso::ops {

inline const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, const char* name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

inline int64_t IntAttribute(const onnx::NodeProto& node, const char* name, int64_t fallback) {
  const onnx::AttributeProto* a = FindAttribute(node, name);
  return a ? a->i() : fallback;
}

inline std::vector<int64_t> IntsAttribute(const onnx::NodeProto& node, const char* name) {
  const onnx::AttributeProto* a = FindAttribute(node, name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>();
}

inline std::string StringAttribute(const onnx::NodeProto& node, const char* name, const std::string& fallback) {
  const onnx::AttributeProto* a = FindAttribute(node, name);
  return a ? a->s() : fallback;
}

}  // namespace taso::ops
