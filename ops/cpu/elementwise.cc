// Element-wise operators on oneDNN: relu, tanh, sigmoid, sqrt, a power by a constant and a
// clip to constant bounds (eltwise); add, sub, mul and div (binary, with numpy broadcasting), scalar mul (binary
// against a one-element tensor).
#include <limits>

#include "backends/cpu_kernel.h"
#include "op_util.h"

namespace taso::ops {
namespace {

absl::StatusOr<std::unique_ptr<cpu::Prepared>> Eltwise(dnnl::algorithm algo, float alpha, float beta,
                                                       const Shape& shape, const Params& p = {}) {
  const dnnl::memory::desc md = cpu::Layout(shape, p);
  dnnl::eltwise_forward::primitive_desc pd(
      dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, algo, md, alpha, beta), cpu::Engine());
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
struct SqrtKernel : UnaryKernel {
  SqrtKernel() : UnaryKernel(dnnl::algorithm::eltwise_sqrt) {}
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

class BinaryKernel : public cpu::Kernel {
 public:
  explicit BinaryKernel(dnnl::algorithm algo) : algo_(algo) {}
  // Blocked only without broadcasting.
  std::vector<size_t> LayoutInputs(const Params&, absl::Span<const InputInfo> in) const override {
    if (in[0].shape == in[1].shape) return {0, 1};
    return {};
  }
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params& p, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType> out) const override {
    if (cpu::IsBlocked(p) && in[0].shape == in[1].shape) {
      const dnnl::memory::desc md = cpu::Layout(in[0].shape, p);
      dnnl::binary::primitive_desc pd(dnnl::binary::desc(algo_, md, md, md), cpu::Engine());
      auto run = std::make_unique<cpu::PrimitiveRun>();
      run->Add(dnnl::binary(pd), {{DNNL_ARG_SRC_0, run->Input(0, md, md)},
                                  {DNNL_ARG_SRC_1, run->Input(1, md, md)},
                                  {DNNL_ARG_DST, run->Output(0, md, md)}});
      return run;
    }
    const size_t rank = std::max<size_t>(1, out[0].shape.size());
    const Shape sa = ToRank(in[0].shape, rank), sb = ToRank(in[1].shape, rank), sc = ToRank(out[0].shape, rank);
    const dnnl::memory::desc a = cpu::Plain(sa), b = cpu::Plain(sb), c = cpu::Plain(sc);
    dnnl::binary::primitive_desc pd(dnnl::binary::desc(algo_, a, b, c), cpu::Engine());
    auto run = std::make_unique<cpu::PrimitiveRun>();
    run->Add(dnnl::binary(pd), {{DNNL_ARG_SRC_0, run->Input(0, sa, a)},
                                {DNNL_ARG_SRC_1, run->Input(1, sb, b)},
                                {DNNL_ARG_DST, run->Output(0, sc, c)}});
    return run;
  }

 private:
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
TASO_REGISTER_CPU_KERNEL("Relu", ReluKernel);
TASO_REGISTER_CPU_KERNEL("Tanh", TanhKernel);
TASO_REGISTER_CPU_KERNEL("Sigmoid", SigmoidKernel);
TASO_REGISTER_CPU_KERNEL("Sqrt", SqrtKernel);
TASO_REGISTER_CPU_KERNEL("Pow", PowKernel);
TASO_REGISTER_CPU_KERNEL("Clip", ClipKernel);
TASO_REGISTER_CPU_KERNEL("Add", AddKernel);
TASO_REGISTER_CPU_KERNEL("Sub", SubKernel);
TASO_REGISTER_CPU_KERNEL("Mul", MulKernel);
TASO_REGISTER_CPU_KERNEL("Div", DivKernel);
TASO_REGISTER_CPU_KERNEL("ScalarMul", MulKernel);

}  // namespace
}  // namespace taso::ops
