// Operators the cpu backend runs as views of their input: reshapes (Reshape, Flatten,
// Identity, inference Dropout) keep the row-major bytes; a split along an axis with only
// ones before it cuts the input into contiguous pieces.
#include "backends/cpu/cpu_kernel.h"
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

class SameBytes : public cpu::View {
 public:
  std::optional<std::vector<int64_t>> Offsets(const Params&, absl::Span<const InputInfo> in,
                                              absl::Span<const OutputType> out) const override {
    // Dropout's optional mask output is not a view.
    if (out.size() != 1 || NumElements(out[0].shape) != NumElements(in[0].shape)) return std::nullopt;
    return std::vector<int64_t>{0};
  }
};

class ContiguousSplit : public cpu::View {
 public:
  std::optional<std::vector<int64_t>> Offsets(const Params& p, absl::Span<const InputInfo> in,
                                              absl::Span<const OutputType> out) const override {
    const Shape& x = in[0].shape;
    auto axis = NormalizeAxis(p.Int("axis", 0), static_cast<int>(x.size()));
    if (!axis.ok()) return std::nullopt;
    for (int d = 0; d < *axis; ++d)
      if (x[d] != 1) return std::nullopt;
    std::vector<int64_t> offsets;
    int64_t at = 0;
    for (const OutputType& o : out) {
      offsets.push_back(at);
      at += NumElements(o.shape);
    }
    return offsets;
  }
};

TASO_REGISTER_CPU_VIEW(op_names::kReshape, SameBytes);
TASO_REGISTER_CPU_VIEW(op_names::kFlatten, SameBytes);
TASO_REGISTER_CPU_VIEW(op_names::kIdentity, SameBytes);
TASO_REGISTER_CPU_VIEW(op_names::kDropout, SameBytes);
TASO_REGISTER_CPU_VIEW(op_names::kSplit, ContiguousSplit);

}  // namespace
}  // namespace taso::ops
