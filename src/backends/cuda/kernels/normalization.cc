// Softmax, inference BatchNormalization and LayerNormalization on the cuda backend's own
// kernels.
#include "backends/cuda/cuda_kernel.h"
#include "backends/cuda/kernels/device_kernels.h"
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops::cuda_kernels {  // apart from the cpu kernels of the same names
namespace {

using cuda::Check;

class SoftmaxRun : public cuda::Prepared {
 public:
  SoftmaxRun(int64_t outer, int64_t len, int64_t inner) : outer_(outer), len_(len), inner_(inner) {}
  absl::Status Enqueue(cuda::Context& ctx) override {
    return Check(cuda::device::Softmax(in(0), out(0), outer_, len_, inner_, ctx.stream), "running softmax");
  }

 private:
  int64_t outer_, len_, inner_;
};

class SoftmaxKernel : public cuda::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cuda::Prepared>> Prepare(cuda::Context&, const Params& p,
                                                          absl::Span<const InputInfo> in,
                                                          absl::Span<const OutputType>) const override {
    const Shape& x = in[0].shape;
    ASSIGN_OR_RETURN(int axis, NormalizeAxis(p.Int("axis", -1), static_cast<int>(x.size())));
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= x[d];
    for (size_t d = axis + 1; d < x.size(); ++d) inner *= x[d];
    return std::make_unique<SoftmaxRun>(outer, x[axis], inner);
  }
};

class BatchNormRun : public cuda::Prepared {
 public:
  BatchNormRun(float epsilon, int64_t n, int64_t c, int64_t inner) : epsilon_(epsilon), n_(n), c_(c), inner_(inner) {}
  absl::Status Enqueue(cuda::Context& ctx) override {
    return Check(
        cuda::device::BatchNorm(in(0), in(1), in(2), in(3), in(4), epsilon_, out(0), n_, c_, inner_, ctx.stream),
        "running batch normalization");
  }

 private:
  float epsilon_;
  int64_t n_, c_, inner_;
};

class BatchNormKernel : public cuda::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cuda::Prepared>> Prepare(cuda::Context&, const Params& p,
                                                          absl::Span<const InputInfo> in,
                                                          absl::Span<const OutputType>) const override {
    const Shape& x = in[0].shape;
    if (x.size() < 2 || in.size() != 5) return Bad("BatchNormalization takes x, scale, bias, mean and variance");
    const int64_t inner = NumElements(absl::MakeConstSpan(x).subspan(2));
    return std::make_unique<BatchNormRun>(static_cast<float>(p.Float("epsilon", 1e-5)), x[0], x[1], inner);
  }
};

class LayerNormRun : public cuda::Prepared {
 public:
  LayerNormRun(float epsilon, int64_t rows, int64_t width) : epsilon_(epsilon), rows_(rows), width_(width) {}
  absl::Status Enqueue(cuda::Context& ctx) override {
    return Check(cuda::device::LayerNorm(in(0), in(1), in(2), epsilon_, out(0), rows_, width_, ctx.stream),
                 "running layer normalization");
  }

 private:
  float epsilon_;
  int64_t rows_, width_;
};

// PyTorch writes every transformer's LayerNorm so from opset 17; without this kernel each
// ran on the host, two copies across the bus apiece.
class LayerNormKernel : public cuda::Kernel {
 public:
  absl::StatusOr<std::unique_ptr<cuda::Prepared>> Prepare(cuda::Context&, const Params& p,
                                                          absl::Span<const InputInfo> in,
                                                          absl::Span<const OutputType>) const override {
    ASSIGN_OR_RETURN(Rows rows, RowsFrom(in[0].shape, p.Int("axis", -1)));
    return std::make_unique<LayerNormRun>(static_cast<float>(p.Float("epsilon", 1e-5)), rows.count, rows.width);
  }
};

TASO_REGISTER_CUDA_KERNEL(op_names::kSoftmax, SoftmaxKernel);
TASO_REGISTER_CUDA_KERNEL(op_names::kBatchNormalization, BatchNormKernel);
TASO_REGISTER_CUDA_KERNEL(op_names::kLayerNormalization, LayerNormKernel);

}  // namespace
}  // namespace taso::ops::cuda_kernels
