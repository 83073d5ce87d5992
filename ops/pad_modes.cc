// The size limit (taso/ir/onnx_size_limit.h) of Pad's other modes, opaque nodes (pad.cc
// is the constant mode): "reflect" mirrors an axis about its first and last elements, so
// each pad must be shorter than the axis (as PyTorch's reflection padding requires, and
// ONNX Runtime refuses an axis of 1); "edge" repeats them, so a padded axis must not be
// empty. ONNX's inference gives the padded sizes either way.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onnx_attributes.h"
#include "taso/ir/onnx_size_limit.h"

namespace taso::ops {
namespace {

// The pads [begin_0.., end_0..]: the attribute before opset 11, the constant input since;
// empty where they are not known here or name axes (opset 18's `axes` input).
std::vector<int64_t> PadsOf(const onnx::NodeProto& node, const std::vector<InputInfo>& in) {
  if (const onnx::AttributeProto* pads = FindAttribute(node, "pads"))
    return std::vector<int64_t>(pads->ints().begin(), pads->ints().end());
  const bool axes_given = in.size() > 3 && in[3].present;
  if (in.size() < 2 || axes_given || !in[1].present || in[1].constant == nullptr ||
      in[1].constant->dtype() != DataType::kInt64)
    return {};
  return std::vector<int64_t>(in[1].constant->ints().begin(), in[1].constant->ints().end());
}

absl::Status CheckPadFits(const onnx::NodeProto& node, const std::vector<InputInfo>& in) {
  const std::string mode = StringAttribute(node, "mode", "constant");
  if ((mode != "reflect" && mode != "edge") || in.empty() || !in[0].shape_known) return absl::OkStatus();
  const Shape& x = in[0].shape;
  const std::vector<int64_t> pads = PadsOf(node, in);
  if (pads.size() != 2 * x.size()) return absl::OkStatus();
  for (size_t d = 0; d < x.size(); ++d) {
    const int64_t widest = std::max(pads[d], pads[d + x.size()]);
    const bool fits = widest <= 0 || (mode == "reflect" ? widest < x[d] : x[d] > 0);
    if (!fits)
      return absl::InvalidArgumentError(
          absl::StrCat(mode, " pads [", absl::StrJoin(pads, ","), "] need ",
                       mode == "reflect" ? "each padded axis longer than its pads" : "each padded axis not empty",
                       "; the input is [", absl::StrJoin(x, ","), "]"));
  }
  return absl::OkStatus();
}

}  // namespace

TASO_REGISTER_ONNX_SIZE_LIMIT("Pad", CheckPadFits);

}  // namespace taso::ops
