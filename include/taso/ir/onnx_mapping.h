// How an operator reads and writes its ONNX form. ONNX import and export see operators
// through this part of OpDef (OpDef::onnx()).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "taso/ir/params.h"

namespace taso {

class OnnxImportNode;
class OnnxExportNode;

class OnnxMapping {
 public:
  virtual ~OnnxMapping() = default;

  // The operator's name (OpSemantics::name), for error messages.
  virtual absl::string_view name() const = 0;

  // The ONNX op types (default domain) this operator may represent.
  virtual std::vector<std::string> onnx_op_types() const { return {}; }
  // Among operators claiming the same ONNX op type, higher priority is tried first (equal
  // priorities in the order of their names).
  virtual int onnx_import_priority() const { return 0; }
  // The parameters, or nullopt when this node has a meaning the operator cannot represent
  // exactly (it is then kept opaque). Importers call Import, which checks what this read.
  virtual absl::StatusOr<std::optional<Params>> FromOnnx(OnnxImportNode& node) const { return std::nullopt; }
  // Writes the node (or nodes) representing one application of the operator.
  virtual absl::Status ToOnnx(const Params& params, OnnxExportNode& node) const;

  // FromOnnx, then an error if it read an attribute of another type than the attribute
  // holds (invalid ONNX, e.g. Conv strides as floats): such a node is refused rather than
  // read with defaults.
  absl::StatusOr<std::optional<Params>> Import(OnnxImportNode& node) const;
};

}  // namespace taso
