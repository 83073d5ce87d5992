// MatMul on oneDNN: 2-D, a batch against one matrix, or batched with equal ranks.
#include "backends/cpu/cpu_kernel.h"
#include "op_util.h"
#include "taso/ir/ops/names.h"

namespace taso::ops {
namespace {

// A right operand that is one matrix (no batch, or a batch of one) is a layer's weight;
// a batched one (attention's keys and values) is an activation.
bool IsWeightMatrix(const Shape& b) {
  int64_t batch = 1;
  for (size_t d = 0; d + 2 < b.size(); ++d) batch *= b[d];
  return batch == 1;
}

class MatMulKernel : public cpu::Kernel {
 public:
  bool ReadsWeight(size_t i, absl::Span<const InputInfo> in) const override {
    return i == 1 && IsWeightMatrix(in[1].shape);
  }
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params&, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType> out) const override {
    Shape a = in[0].shape, b = in[1].shape, c = out[0].shape;
    // A constant matrix is rearranged once, at Setup, into the layout the primitive reads
    // fastest, as ONNX Runtime pre-packs it, so that runs pay for the packing once; one
    // stored with a batch dimension is read as it lies, weights not copied.
    const bool packed = in[1].constant && b.size() == 2;
    if (a.size() < 2 || b.size() < 2 || c.size() < 2)
      return Bad("oneDNN matmul here takes matrices or batches of them");
    if (IsWeightMatrix(b)) {
      // A layer's weight shared by a batch (a linear layer on a rank-3 activation, as
      // PyTorch writes every transformer's): the batch is more rows of one product, the
      // same bytes.
      a = {NumElements(a) / a.back(), a.back()};
      b = {b[b.size() - 2], b.back()};
      c = {NumElements(c) / c.back(), c.back()};
    } else if (a.size() != b.size() || a.size() != c.size()) {
      return Bad("oneDNN matmul here takes batched operands of one rank");
    }
    const dnnl::memory::desc weights =
        packed ? dnnl::memory::desc(cpu::Dims(b), dnnl::memory::data_type::f32, dnnl::memory::format_tag::any)
               : cpu::Plain(b);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(cpu::Plain(a), weights, cpu::Plain(c)), cpu::Engine());
    auto run = std::make_unique<cpu::PrimitiveRun>();
    run->Add(dnnl::matmul(pd), {{DNNL_ARG_SRC, run->Input(0, a, pd.src_desc())},
                                {DNNL_ARG_WEIGHTS, run->Input(1, b, pd.weights_desc(), packed)},
                                {DNNL_ARG_DST, run->Output(0, c, pd.dst_desc())}});
    return run;
  }
};

// Gemm: alpha * op(A) op(B) + C, with op a transpose read through strides and C a bias
// broadcast over rows (beta 1) or absent.
class GemmKernel : public cpu::Kernel {
 public:
  bool ReadsWeight(size_t i, absl::Span<const InputInfo>) const override { return i >= 1; }  // B, C
  absl::StatusOr<std::unique_ptr<cpu::Prepared>> Prepare(const Params& p, absl::Span<const InputInfo> in,
                                                         absl::Span<const OutputType> out) const override {
    const Shape &a = in[0].shape, &b = in[1].shape, &c = out[0].shape;
    const bool bias = in.size() == 3 && in[2].present;
    if (bias && p.Float("beta", 1.0) != 1.0) return Bad("oneDNN's matmul bias is added with beta 1");
    // oneDNN 2.6 scales the bias too (alpha (A B + C), not alpha A B + C): such a Gemm
    // runs on its reference kernel.
    if (bias && p.Float("alpha", 1.0) != 1.0) return Bad("oneDNN's output scale would scale the bias");
    // Transposed operands: the stored matrix read with swapped strides.
    auto operand = [](const Shape& s, bool transposed) {
      return transposed ? dnnl::memory::desc({s[1], s[0]}, dnnl::memory::data_type::f32, {1, s[1]}) : cpu::Plain(s);
    };
    const dnnl::memory::desc da = operand(a, p.Int("transA", 0) != 0), db = operand(b, p.Int("transB", 0) != 0);
    const dnnl::memory::desc dc = cpu::Plain(c);
    Shape bias_shape;
    if (bias) {
      bias_shape = in[2].shape;
      while (bias_shape.size() < 2) bias_shape.insert(bias_shape.begin(), 1);
    }
    dnnl::primitive_attr attr;
    if (const float alpha = static_cast<float>(p.Float("alpha", 1.0)); alpha != 1.0f)
      attr.set_output_scales(0, {alpha});
    auto desc = bias ? dnnl::matmul::desc(da, db, cpu::Plain(bias_shape), dc) : dnnl::matmul::desc(da, db, dc);
    dnnl::matmul::primitive_desc pd(desc, attr, cpu::Engine());
    auto run = std::make_unique<cpu::PrimitiveRun>();
    // The ports are the stored (row-major) operands; the primitive reads them transposed.
    auto port = [&](size_t i, const dnnl::memory::desc& md) {
      dnnl::memory stored = cpu::PrimitiveRun::Buffer(cpu::Plain(in[i].shape));
      run->AddInputPort(i, stored);
      dnnl::memory read(md, cpu::Engine(), stored.get_data_handle());
      run->AddInputPort(i, read);
      return read;
    };
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, port(0, da)}, {DNNL_ARG_WEIGHTS, port(1, db)}, {DNNL_ARG_DST, run->Output(0, c, dc)}};
    if (bias) args[DNNL_ARG_BIAS] = run->Input(2, bias_shape, cpu::Plain(bias_shape));
    run->Add(dnnl::matmul(pd), std::move(args));
    return run;
  }
};

TASO_REGISTER_CPU_KERNEL(op_names::kMatMul, MatMulKernel);
TASO_REGISTER_CPU_KERNEL(op_names::kGemm, GemmKernel);

}  // namespace
}  // namespace taso::ops
