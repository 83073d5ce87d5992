// Element-wise operators on the cuda backend's own kernels: relu, tanh, sigmoid, sqrt,
// erf, gelu, hard sigmoid, hard swish and clip; add, sub, mul, div and pow with numpy
// broadcasting; scalar mul.
#include "backends/cuda/cuda_kernel.h"
#include "backends/cuda/kernels/strided.h"
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops::cuda_kernels {  // apart from the cpu kernels of the same names
namespace {

using cuda::Check;
namespace device = cuda::device;

class UnaryRun : public cuda::Prepared {
 public:
  UnaryRun(device::Unary op, device::UnaryParams params, int64_t n) : op_(op), params_(params), n_(n) {}
  absl::Status Enqueue(cuda::Context& ctx) override {
    return Check(device::UnaryOp(op_, params_, in(0), out(0), n_, ctx.stream), "running an element-wise operator");
  }

 private:
  device::Unary op_;
  device::UnaryParams params_;
  int64_t n_;
};

class UnaryKernel : public cuda::Kernel {
 public:
  explicit UnaryKernel(device::Unary op) : op_(op) {}
  absl::StatusOr<std::unique_ptr<cuda::Prepared>> Prepare(cuda::Context&, const Params& p,
                                                          absl::Span<const InputInfo> in,
                                                          absl::Span<const OutputType>) const override {
    if (in[0].dtype != DataType::kFloat32) return Bad("float operands only");
    return std::make_unique<UnaryRun>(op_, ParamsOf(p), NumElements(in[0].shape));
  }

 protected:
  // The operator's parameters as the device kernel takes them (none but for HardSigmoid).
  virtual device::UnaryParams ParamsOf(const Params&) const { return {}; }

 private:
  device::Unary op_;
};

struct ReluKernel : UnaryKernel {
  ReluKernel() : UnaryKernel(device::Unary::kRelu) {}
};
struct TanhKernel : UnaryKernel {
  TanhKernel() : UnaryKernel(device::Unary::kTanh) {}
};
struct SigmoidKernel : UnaryKernel {
  SigmoidKernel() : UnaryKernel(device::Unary::kSigmoid) {}
};
struct SqrtKernel : UnaryKernel {
  SqrtKernel() : UnaryKernel(device::Unary::kSqrt) {}
};
struct ErfKernel : UnaryKernel {
  ErfKernel() : UnaryKernel(device::Unary::kErf) {}
};
// The import's activation fusion makes PyTorch's spelled-out GELU one Gelu node: without
// this kernel the clean-up alone sent BERT's to the reference kernels on the GPU.
struct GeluKernel : UnaryKernel {
  GeluKernel() : UnaryKernel(device::Unary::kGelu) {}
};
struct HardSwishKernel : UnaryKernel {
  HardSwishKernel() : UnaryKernel(device::Unary::kHardSwish) {}
};
// Defaults as ops/hard_activations.cc's.
struct HardSigmoidKernel : UnaryKernel {
  HardSigmoidKernel() : UnaryKernel(device::Unary::kHardSigmoid) {}
  device::UnaryParams ParamsOf(const Params& p) const override {
    return {static_cast<float>(p.Float("alpha", 0.2)), static_cast<float>(p.Float("beta", 0.5))};
  }
};

// Clip's bounds are inputs (ReLU6 in MobileNet: constants); one left out is null.
class ClipRun : public cuda::Prepared {
 public:
  explicit ClipRun(int64_t n) : n_(n) {}
  absl::Status Enqueue(cuda::Context& ctx) override {
    return Check(device::Clip(in(0), in(1), in(2), out(0), n_, ctx.stream), "running clip");
  }

 private:
  int64_t n_;
};

class ClipKernel : public cuda::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cuda::Prepared>> Prepare(cuda::Context&, const Params&, absl::Span<const InputInfo> in,
                                                          absl::Span<const OutputType>) const override {
    return std::make_unique<ClipRun>(NumElements(in[0].shape));
  }
};

class BinaryRun : public cuda::Prepared {
 public:
  BinaryRun(device::Binary op, const device::Strided& s) : op_(op), s_(s) {}
  absl::Status Enqueue(cuda::Context& ctx) override {
    return Check(device::BinaryOp(op_, in(0), in(1), out(0), s_, ctx.stream), "running an element-wise operator");
  }

 private:
  device::Binary op_;
  device::Strided s_;
};

class BinaryKernel : public cuda::Kernel {
 public:
  explicit BinaryKernel(device::Binary op) : op_(op) {}
  absl::StatusOr<std::unique_ptr<cuda::Prepared>> Prepare(cuda::Context&, const Params& p,
                                                          absl::Span<const InputInfo> in,
                                                          absl::Span<const OutputType> out) const override {
    if (in[0].dtype != DataType::kFloat32 || in[1].dtype != DataType::kFloat32) return Bad("float operands only");
    auto s = cuda_strides::Broadcast(out[0].shape, in[0].shape, in[1].shape);
    if (!s) return Bad("more dimensions than the cuda kernels take");
    return std::make_unique<BinaryRun>(op_, *s);
  }

 private:
  device::Binary op_;
};

struct AddKernel : BinaryKernel {
  AddKernel() : BinaryKernel(device::Binary::kAdd) {}
};
struct SubKernel : BinaryKernel {
  SubKernel() : BinaryKernel(device::Binary::kSub) {}
};
struct MulKernel : BinaryKernel {
  MulKernel() : BinaryKernel(device::Binary::kMul) {}
};
struct DivKernel : BinaryKernel {
  DivKernel() : BinaryKernel(device::Binary::kDiv) {}
};
struct PowKernel : BinaryKernel {
  PowKernel() : BinaryKernel(device::Binary::kPow) {}
};

TASO_REGISTER_CUDA_KERNEL(op_names::kRelu, ReluKernel);
TASO_REGISTER_CUDA_KERNEL(op_names::kTanh, TanhKernel);
TASO_REGISTER_CUDA_KERNEL(op_names::kSigmoid, SigmoidKernel);
TASO_REGISTER_CUDA_KERNEL(op_names::kSqrt, SqrtKernel);
TASO_REGISTER_CUDA_KERNEL(op_names::kErf, ErfKernel);
TASO_REGISTER_CUDA_KERNEL(op_names::kGelu, GeluKernel);
TASO_REGISTER_CUDA_KERNEL(op_names::kHardSwish, HardSwishKernel);
TASO_REGISTER_CUDA_KERNEL(op_names::kHardSigmoid, HardSigmoidKernel);
TASO_REGISTER_CUDA_KERNEL(op_names::kClip, ClipKernel);
TASO_REGISTER_CUDA_KERNEL(op_names::kAdd, AddKernel);
TASO_REGISTER_CUDA_KERNEL(op_names::kSub, SubKernel);
TASO_REGISTER_CUDA_KERNEL(op_names::kMul, MulKernel);
TASO_REGISTER_CUDA_KERNEL(op_names::kDiv, DivKernel);
TASO_REGISTER_CUDA_KERNEL(op_names::kPow, PowKernel);
TASO_REGISTER_CUDA_KERNEL(op_names::kScalarMul, MulKernel);

}  // namespace
}  // namespace taso::ops::cuda_kernels
