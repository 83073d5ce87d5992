// The cuda backend's measured costs: each kernel prepared on buffers of its own and timed
// with CUDA events around runs enqueued back to back (warm-up, then the median of
// repeated batches).
#include "taso/backends/cuda_cost.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/cpu_kernel.h"
#include "backends/cuda/cuda_kernel.h"
#include "taso/ir/status_macros.h"

namespace taso {
namespace {

// A kernel is timed as the executor runs it: enqueued back to back with others, so that
// its launch overlaps the kernel before it. Timed alone between two events, each run is
// charged the launch latency (several microseconds), more than many small kernels take:
// NasRNN's estimates were 58% and 94% above its measured times on an H200. Enough runs
// are enqueued between the events that a batch takes about kBatchSeconds.
constexpr double kBatchSeconds = 100e-6;
constexpr int kMaxRunsPerBatch = 32;

// Runs per batch for a kernel whose run took `seconds`.
int RunsPerBatch(double seconds) {
  if (!(seconds > 0)) return kMaxRunsPerBatch;
  return static_cast<int>(std::clamp(std::ceil(kBatchSeconds / seconds), 1.0, double{kMaxRunsPerBatch}));
}

// Seconds per run of `runs` runs of a kernel enqueued back to back between CUDA events.
absl::StatusOr<double> TimedKernel(cuda::Context& ctx, cuda::Prepared& p, cuda::Event& start, cuda::Event& stop,
                                   int runs) {
  RETURN_IF_ERROR(cuda::Check(cudaEventRecord(start.e, ctx.stream), "recording an event"));
  for (int i = 0; i < runs; ++i) RETURN_IF_ERROR(p.Enqueue(ctx));
  RETURN_IF_ERROR(cuda::Check(cudaEventRecord(stop.e, ctx.stream), "recording an event"));
  RETURN_IF_ERROR(cuda::Check(cudaEventSynchronize(stop.e), "timing a kernel"));
  ASSIGN_OR_RETURN(double seconds, cuda::SecondsBetween(start, stop));
  return seconds / runs;
}

class CudaCost : public MeasuredCost {
 public:
  CudaCost(std::unique_ptr<CostCache> cache, cuda::Context& ctx, std::string device)
      : MeasuredCost(std::move(cache), std::move(device)), ctx_(ctx) {}
  std::string name() const override { return "cuda"; }

 protected:
  // 2 GFLOP, tens of microseconds on an H200: the GPU's time. A 256x256 product is all
  // launch, the host's time, and scaling by it put one graph's estimate at 4.3 and 5.5 ms
  // in two processes a minute apart.
  int64_t ReferenceSide() const override { return 1024; }
  bool IsView(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
              absl::Span<const OutputType> outputs) const override {
    const cpu::View* view = cpu::FindView(op.name());
    return view && !cuda::HasLayout(params) && view->Offsets(params, inputs, outputs);
  }

  std::optional<KernelRun> PrepareRun(const OpDef& op, const Params& params, absl::Span<const InputInfo> inputs,
                                      absl::Span<const OutputType> outputs) override {
    const cuda::Kernel* kernel = cuda::FindKernel(op.name());
    if (!kernel || cuda::HasLayout(params)) return std::nullopt;  // the cuda kernels run plain layouts
    auto prepared = kernel->Prepare(ctx_, params, inputs, outputs);
    if (!prepared.ok()) return std::nullopt;
    struct Timed {
      std::unique_ptr<cuda::Prepared> prepared;
      std::vector<cuda::DeviceBuffer> buffers;
      cuda::Event start, stop;
      int runs_per_batch = 1;  // from the run before: the first runs are warm-ups
    };
    auto timed = std::make_shared<Timed>();
    timed->prepared = *std::move(prepared);
    // Buffers of small values (no NaNs or denormals to slow a kernel down).
    auto buffer = [&](const Shape& shape) -> absl::StatusOr<float*> {
      const size_t n = std::max<int64_t>(1, NumElements(shape));
      ASSIGN_OR_RETURN(cuda::DeviceBuffer b, cuda::DeviceBuffer::Allocate(n * sizeof(float)));
      std::vector<float> values(n);
      for (size_t k = 0; k < n; ++k) values[k] = 0.25f + 0.001f * static_cast<float>(k % 97);
      RETURN_IF_ERROR(cuda::Check(cudaMemcpy(b.data(), values.data(), n * sizeof(float), cudaMemcpyHostToDevice),
                                  "filling a buffer"));
      timed->buffers.push_back(std::move(b));
      return timed->buffers.back().floats();
    };
    // An input of another type is a constant the import read into the parameters
    // (ReduceMean's axes since opset 18), which the executor does not bind either: priced
    // by its analytic estimate, BERT's 32 LayerNorm means were 2.4 times their time.
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].present || inputs[i].dtype != DataType::kFloat32) continue;
      auto p = buffer(inputs[i].shape);
      if (!p.ok()) return std::nullopt;
      timed->prepared->BindInput(i, *p);
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      auto p = buffer(outputs[i].shape);
      if (!p.ok()) return std::nullopt;
      timed->prepared->BindOutput(i, *p);
    }
    cuda::Context& ctx = ctx_;
    return [timed, &ctx]() -> absl::StatusOr<double> {
      ASSIGN_OR_RETURN(double seconds,
                       TimedKernel(ctx, *timed->prepared, timed->start, timed->stop, timed->runs_per_batch));
      timed->runs_per_batch = RunsPerBatch(seconds);
      return seconds;
    };
  }

 private:
  cuda::Context& ctx_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<MeasuredCost>> MakeCudaCost(std::unique_ptr<CostCache> cache) {
  ASSIGN_OR_RETURN(cuda::Context * ctx, cuda::GetContext());
  cudaDeviceProp prop{};
  RETURN_IF_ERROR(cuda::Check(cudaGetDeviceProperties(&prop, 0), "reading the GPU's properties"));
  // Bump the kernel version whenever what a kernel's run includes or how its time is kept
  // changes, so that old measurements are not reused.
  const std::string device = absl::StrCat("cuda kernels v4/", prop.name, "/cuDNN ", cudnnGetVersion());
  return std::unique_ptr<MeasuredCost>(new CudaCost(std::move(cache), *ctx, device));
}

}  // namespace taso
