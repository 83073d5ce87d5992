// The size limit (taso/ir/onnx_size_limit.h) of ONNX's windowed operators of any rank as
// opaque nodes (the library's 2-D ones check their own): the dilated window must fit the
// padded input, where ONNX's inference gives an empty output (a 1-D convolution of
// kernel 10 over 1 sample) and runtimes refuse the node. ONNX Runtime's pools give that
// empty output rather than refuse it; it is refused for them too, as the library's own
// 2-D windows refuse it: nothing after an empty window computes anything.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "onnx_attributes.h"
#include "taso/ir/onnx_size_limit.h"

namespace taso::ops {
namespace {

// The window's size per spatial axis: kernel_shape, else a convolution's weight's.
std::vector<int64_t> WindowOf(const onnx::NodeProto& node, const std::vector<InputInfo>& in, size_t rank) {
  std::vector<int64_t> kernel = IntsAttribute(node, "kernel_shape");
  if (kernel.empty() && node.op_type() == "Conv" && in.size() > 1 && in[1].present && in[1].shape_known &&
      in[1].shape.size() == rank)
    kernel.assign(in[1].shape.begin() + 2, in[1].shape.end());
  return kernel;
}

// Whether an axis of `size`, padded at both ends, yields at least one output for a window of
// `kernel` dilated by `dilation`: ceil_mode counts a last window that starts inside the
// padded input. In 128 bits, as attributes may be anything up to int64's limits.
bool FitsAxis(int64_t size, int64_t pad_begin, int64_t pad_end, int64_t kernel, int64_t dilation, int64_t stride,
              bool ceil_mode) {
  const __int128 window = (static_cast<__int128>(kernel) - 1) * dilation + 1;
  const __int128 room = static_cast<__int128>(size) + pad_begin + pad_end - window;
  return ceil_mode ? room > -static_cast<__int128>(stride) : room >= 0;
}

// The dilations and pads where they are not the defaults, for the message.
std::string WindowDetails(const std::vector<int64_t>& pads, const std::vector<int64_t>& dilations) {
  const auto set = [](const std::vector<int64_t>& v, int64_t fallback) {
    return std::any_of(v.begin(), v.end(), [&](int64_t x) { return x != fallback; });
  };
  std::vector<std::string> parts;
  if (set(dilations, 1)) parts.push_back(absl::StrCat("dilations [", absl::StrJoin(dilations, ","), "]"));
  if (set(pads, 0)) parts.push_back(absl::StrCat("pads [", absl::StrJoin(pads, ","), "]"));
  return parts.empty() ? "" : absl::StrCat(" (", absl::StrJoin(parts, ", "), ")");
}

absl::Status CheckWindowFits(const onnx::NodeProto& node, const std::vector<InputInfo>& in) {
  if (in.empty() || !in[0].present || !in[0].shape_known || in[0].shape.size() < 3) return absl::OkStatus();
  const Shape& x = in[0].shape;
  const size_t spatial = x.size() - 2;
  const std::vector<int64_t> kernel = WindowOf(node, in, x.size());
  const std::string auto_pad = StringAttribute(node, "auto_pad", "NOTSET");
  if (kernel.size() != spatial || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") return absl::OkStatus();
  std::vector<int64_t> pads = IntsAttribute(node, "pads"), dilations = IntsAttribute(node, "dilations"),
                       strides = IntsAttribute(node, "strides");
  if (auto_pad == "VALID" || pads.size() != 2 * spatial) pads.assign(2 * spatial, 0);
  if (dilations.size() != spatial) dilations.assign(spatial, 1);
  if (strides.size() != spatial) strides.assign(spatial, 1);
  const bool ceil_mode = IntAttribute(node, "ceil_mode", 0) != 0;
  for (size_t d = 0; d < spatial; ++d) {
    // Windows, dilations and strides that are not positive are ONNX's checker's to refuse.
    if (kernel[d] < 1 || dilations[d] < 1 || strides[d] < 1 || x[d + 2] < 1) continue;
    if (!FitsAxis(x[d + 2], pads[d], pads[d + spatial], kernel[d], dilations[d], strides[d], ceil_mode))
      return absl::InvalidArgumentError(absl::StrCat("window [", absl::StrJoin(kernel, ","), "]",
                                                     WindowDetails(pads, dilations),
                                                     " is larger than the padded input [", absl::StrJoin(x, ","), "]"));
  }
  return absl::OkStatus();
}

}  // namespace

TASO_REGISTER_ONNX_SIZE_LIMIT("Conv", CheckWindowFits);
TASO_REGISTER_ONNX_SIZE_LIMIT("MaxPool", CheckWindowFits);
TASO_REGISTER_ONNX_SIZE_LIMIT("AveragePool", CheckWindowFits);
TASO_REGISTER_ONNX_SIZE_LIMIT("LpPool", CheckWindowFits);

}  // namespace taso::ops
