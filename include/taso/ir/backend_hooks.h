// What graph transforms and backends ask of an operator beyond what it computes: whether
// inference fusion can fold it into a convolution, and the one spelling its parameters
// have for measured costs. Inference fusion and the cost backends see operators through
// this part of OpDef (OpDef::hooks()).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "taso/ir/op_types.h"
#include "taso/ir/params.h"

namespace taso {

// A node's effect on one input of shape [N, C, ...] as a map per channel (dimension 1):
// y = x * scale + shift, the other inputs being constants.
struct ChannelAffine {
  std::vector<float> scale, shift;  // C each
};

class BackendHooks {
 public:
  virtual ~BackendHooks() = default;

  // The per-channel affine map this node applies to input `data` given the constants among
  // its other inputs, or nullopt (inference fusion folds it into a convolution before it).
  virtual std::optional<ChannelAffine> AsChannelAffine(const Params& params, absl::Span<const InputInfo> inputs,
                                                       size_t data) const {
    return std::nullopt;
  }
  // The activation a convolution's "activation" parameter can apply in place of this
  // node ("relu"), or empty.
  virtual absl::string_view AsConvActivation() const { return {}; }

  // The parameters in the one spelling that every way of writing the same computation
  // maps to (ONNX's explicit pads, dilations and group count, where rules write a padding
  // mode and a grouping), so that measurements keyed by it find one kernel under one
  // key; nullopt where the operator has one spelling only.
  virtual std::optional<Params> CanonicalParams(const Params&, absl::Span<const InputInfo>) const {
    return std::nullopt;
  }
};

}  // namespace taso
