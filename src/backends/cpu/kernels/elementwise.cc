// Element-wise operators on oneDNN: relu, tanh, sigmoid, sqrt, hard swish, hard sigmoid, a
// power by a constant and a clip to constant bounds (eltwise); add, sub, mul and div
// (binary, with numpy broadcasting), scalar mul (binary against a one-element tensor).
#include <limits>
#include <optional>

#include "backends/cpu/cpu_kernel.h"
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

absl::StatusOr<std::unique_ptr<cpu::Prepared>> Eltwise(dnnl::algorithm algo, float alpha, float beta,
                                                       const Shape& shape, const Params& p = {},
                                                       const dnnl::primitive_attr& attr = {}) {
  const dnnl::memory::desc md = cpu::Layout(shape, p);
  dnnl::eltwise_forward::primitive_desc pd(
      dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, algo, md, alpha, beta), attr, cpu::Engine());
  auto run = std::make_unique<cpu::PrimitiveRun>();
  run->Add(dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, run->Input(0, md, md)}, {DNNL_ARG_DST, run->Output(0, md, md)}});
  return run;
}

class UnaryKernel : public cpu::Kernel {
 public:
  explicit UnaryKernel(dnnl::algorithm algo) : algo_(algo) {}
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params& p, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType>) const override {
    return Eltwise(algo_, 0.0f, 0.0f, in[0].shape, p);
  }
  std::vector<size_t> LayoutInputs(const Params&, absl::Span<const InputInfo>) const override { return {0}; }

 private:
  dnnl::algorithm algo_;
};

struct ReluKernel : UnaryKernel {
  ReluKernel() : UnaryKernel(dnnl::algorithm::eltwise_relu) {}
};
struct TanhKernel : UnaryKernel {
  TanhKernel() : UnaryKernel(dnnl::algorithm::eltwise_tanh) {}
};
struct SigmoidKernel : UnaryKernel {
  SigmoidKernel() : UnaryKernel(dnnl::algorithm::eltwise_logistic) {}
};
struct GeluKernel : UnaryKernel {
  GeluKernel() : UnaryKernel(dnnl::algorithm::eltwise_gelu_erf) {}
};
struct SqrtKernel : UnaryKernel {
  SqrtKernel() : UnaryKernel(dnnl::algorithm::eltwise_sqrt) {}
};

struct HardSwishKernel : UnaryKernel {
  HardSwishKernel() : UnaryKernel(dnnl::algorithm::eltwise_hardswish) {}
};

// oneDNN 2.6 has no hard sigmoid: alpha * x + beta (eltwise_linear), clipped to [0, 1]
// by a post-op in the same pass.
class HardSigmoidKernel : public cpu::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params& p, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType>) const override {
    dnnl::post_ops clip;
    clip.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, 0.0f, 1.0f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(clip);
    return Eltwise(dnnl::algorithm::eltwise_linear, static_cast<float>(p.Float("alpha", 0.2)),
                   static_cast<float>(p.Float("beta", 0.5)), in[0].shape, p, attr);
  }
  std::vector<size_t> LayoutInputs(const Params&, absl::Span<const InputInfo>) const override { return {0}; }
};

// x ^ e for a constant one-element exponent e: eltwise_pow computes alpha * x ^ beta.
class PowKernel : public cpu::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params&, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType> out) const override {
    const TensorData* e = in[1].constant;
    if (!e || e->dtype() != DataType::kFloat32 || e->numel() != 1 || out[0].shape != in[0].shape)
      return Bad("oneDNN's power takes a constant one-element exponent");
    return Eltwise(dnnl::algorithm::eltwise_pow, 1.0f, e->floats()[0], in[0].shape);
  }
};

// Clip to one-element constant bounds (an absent bound does not limit): eltwise_clip
// computes min(max(x, alpha), beta).
class ClipKernel : public cpu::Kernel {
 public:
  bool NeedsConstant(size_t i) const override { return i > 0; }
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params& p, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType>) const override {
    float bounds[2] = {-std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity()};
    for (size_t i = 1; i < in.size() && i < 3; ++i) {
      if (!in[i].present) continue;
      const TensorData* b = in[i].constant;
      if (!b || b->dtype() != DataType::kFloat32 || b->numel() != 1) return Bad("oneDNN's clip takes constant bounds");
      bounds[i - 1] = b->floats()[0];
    }
    return Eltwise(dnnl::algorithm::eltwise_clip, bounds[0], bounds[1], in[0].shape, p);
  }
  std::vector<size_t> LayoutInputs(const Params&, absl::Span<const InputInfo>) const override { return {0}; }
};

// oneDNN broadcasts a source of the destination's rank: lower ranks get leading ones.
Shape ToRank(const Shape& s, size_t rank) {
  Shape out(rank - std::min(rank, s.size()), 1);
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

// Which operand of a binary is the whole 4-D map when the other is one value per channel
// ([1, C, 1, 1] or [C, 1, 1]): oneDNN then reads the map blocked and the values plain.
std::optional<size_t> ChannelBroadcast(absl::Span<const InputInfo> in) {
  if (in.size() != 2) return std::nullopt;
  for (size_t full = 0; full < 2; ++full) {
    const Shape& f = in[full].shape;
    const Shape c = ToRank(in[1 - full].shape, 4);
    if (f.size() == 4 && in[1 - full].shape.size() <= 4 && c == Shape{1, f[1], 1, 1} && f != c) return full;
  }
  return std::nullopt;
}

class BinaryKernel : public cpu::Kernel {
 public:
  explicit BinaryKernel(dnnl::algorithm algo) : algo_(algo) {}
  // Blocked without broadcasting, or with one value per channel (unless those values are
  // what a division divides: oneDNN's fast kernels broadcast the second source only).
  std::vector<size_t> LayoutInputs(const Params&, absl::Span<const InputInfo> in) const override {
    if (in[0].shape == in[1].shape) return {0, 1};
    if (auto full = ChannelBroadcast(in); full && (*full == 0 || CanSwap())) return {*full};
    return {};
  }
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params& p, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType> out) const override {
    if (cpu::IsBlocked(p) && in[0].shape == in[1].shape) {
      const dnnl::memory::desc md = cpu::Layout(in[0].shape, p);
      return Binary(md, md, md, false);
    }
    const size_t rank = std::max<size_t>(1, out[0].shape.size());
    const Shape sa = ToRank(in[0].shape, rank), sb = ToRank(in[1].shape, rank), sc = ToRank(out[0].shape, rank);
    if (cpu::IsBlocked(p)) {
      const std::optional<size_t> full = ChannelBroadcast(in);
      if (!full || (*full == 1 && !CanSwap())) return Bad("a blocked binary broadcasts one value per channel at most");
      const dnnl::memory::desc map = cpu::Layout(out[0].shape, p), values = cpu::Plain(*full == 0 ? sb : sa);
      return *full == 0 ? Binary(map, values, map, false) : Binary(values, map, map, true);
    }
    // oneDNN's fast kernels broadcast the second source only; with the first broadcast it
    // falls back to its scalar reference loop (as for a squeeze-excitation's scale times
    // the feature map), so the sources are swapped.
    const bool swap = sa != sc && sb == sc && CanSwap();
    return Binary(cpu::Plain(sa), cpu::Plain(sb), cpu::Plain(sc), swap);
  }

 private:
  // Whether the sources can be given the other way round: a - b is computed as -(b - a);
  // a / b has no such form.
  bool CanSwap() const { return algo_ != dnnl::algorithm::binary_div; }

  // The primitive on sources a (input 0) and b (input 1) and destination c, with the
  // sources given to oneDNN the other way round when `swap`.
  std::unique_ptr<cpu::Prepared> Binary(const dnnl::memory::desc& a, const dnnl::memory::desc& b,
                                        const dnnl::memory::desc& c, bool swap) const {
    dnnl::primitive_attr attr;
    if (swap && algo_ == dnnl::algorithm::binary_sub) {
      dnnl::post_ops negate;
      negate.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, -1.0f, 0.0f);
      attr.set_post_ops(negate);
    }
    dnnl::binary::primitive_desc pd(swap ? dnnl::binary::desc(algo_, b, a, c) : dnnl::binary::desc(algo_, a, b, c),
                                    attr, cpu::Engine());
    auto run = std::make_unique<cpu::PrimitiveRun>();
    dnnl::memory first = run->Input(0, a, a), second = run->Input(1, b, b);
    run->Add(dnnl::binary(pd), {{DNNL_ARG_SRC_0, swap ? second : first},
                                {DNNL_ARG_SRC_1, swap ? first : second},
                                {DNNL_ARG_DST, run->Output(0, c, c)}});
    return run;
  }

  dnnl::algorithm algo_;
};

struct AddKernel : BinaryKernel {
  AddKernel() : BinaryKernel(dnnl::algorithm::binary_add) {}
};
struct SubKernel : BinaryKernel {
  SubKernel() : BinaryKernel(dnnl::algorithm::binary_sub) {}
};
struct MulKernel : BinaryKernel {
  MulKernel() : BinaryKernel(dnnl::algorithm::binary_mul) {}
};
struct DivKernel : BinaryKernel {
  DivKernel() : BinaryKernel(dnnl::algorithm::binary_div) {}
};
TASO_REGISTER_CPU_KERNEL(op_names::kRelu, ReluKernel);
TASO_REGISTER_CPU_KERNEL(op_names::kTanh, TanhKernel);
TASO_REGISTER_CPU_KERNEL(op_names::kSigmoid, SigmoidKernel);
TASO_REGISTER_CPU_KERNEL(op_names::kSqrt, SqrtKernel);
TASO_REGISTER_CPU_KERNEL(op_names::kGelu, GeluKernel);
TASO_REGISTER_CPU_KERNEL(op_names::kPow, PowKernel);
TASO_REGISTER_CPU_KERNEL(op_names::kClip, ClipKernel);
TASO_REGISTER_CPU_KERNEL(op_names::kHardSwish, HardSwishKernel);
TASO_REGISTER_CPU_KERNEL(op_names::kHardSigmoid, HardSigmoidKernel);
TASO_REGISTER_CPU_KERNEL(op_names::kAdd, AddKernel);
TASO_REGISTER_CPU_KERNEL(op_names::kSub, SubKernel);
TASO_REGISTER_CPU_KERNEL(op_names::kMul, MulKernel);
TASO_REGISTER_CPU_KERNEL(op_names::kDiv, DivKernel);
TASO_REGISTER_CPU_KERNEL(op_names::kScalarMul, MulKernel);

}  // namespace
}  // namespace taso::ops
