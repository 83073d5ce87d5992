#include "backends/cuda/cuda_kernel.h"

#include "absl/strings/str_cat.h"
#include "backends/kernel_registry.h"
#include "taso/ir/status_macros.h"

namespace taso::cuda {
namespace {

KernelRegistry<Kernel>& Registry() {
  static auto* r = new KernelRegistry<Kernel>("cuda kernel");
  return *r;
}

absl::StatusOr<Context*> CreateContext() {
  int devices = 0;
  if (cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess || devices == 0)
    return absl::UnavailableError(absl::StrCat("the cuda backend needs a GPU: ",
                                               e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device found"));
  auto* ctx = new Context();
  // A blocking stream: plain cudaMemcpy and cudaMemset (on the legacy default stream) are
  // ordered with the kernels queued on it.
  RETURN_IF_ERROR(Check(cudaStreamCreate(&ctx->stream), "creating a stream"));
  RETURN_IF_ERROR(Check(cudnnCreate(&ctx->cudnn), "creating the cuDNN handle"));
  RETURN_IF_ERROR(Check(cudnnSetStream(ctx->cudnn, ctx->stream), "binding cuDNN to the stream"));
  RETURN_IF_ERROR(Check(cublasCreate(&ctx->cublas), "creating the cuBLAS handle"));
  RETURN_IF_ERROR(Check(cublasSetStream(ctx->cublas, ctx->stream), "binding cuBLAS to the stream"));
  // Plain float32 arithmetic, as the reference executor's (no TF32 tensor cores).
  RETURN_IF_ERROR(Check(cublasSetMathMode(ctx->cublas, CUBLAS_PEDANTIC_MATH), "setting cuBLAS's math mode"));
  if (auto cache = CostCache::Open(DefaultCostCachePath()); cache.ok()) ctx->choices = *std::move(cache);
  cudaDeviceProp prop{};
  RETURN_IF_ERROR(Check(cudaGetDeviceProperties(&prop, 0), "reading the GPU's properties"));
  ctx->choices_device = absl::StrCat("cudnn algorithms v1/", prop.name, "/cuDNN ", cudnnGetVersion());
  return ctx;
}

}  // namespace

absl::Status Check(cudaError_t e, absl::string_view what) {
  if (e == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("CUDA error ", what, ": ", cudaGetErrorString(e)));
}

absl::Status Check(cudnnStatus_t s, absl::string_view what) {
  if (s == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("cuDNN error ", what, ": ", cudnnGetErrorString(s)));
}

absl::Status Check(cublasStatus_t s, absl::string_view what) {
  if (s == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("cuBLAS error ", what, ": ", cublasGetStatusString(s)));
}

absl::StatusOr<double> SecondsBetween(const Event& start, const Event& stop) {
  float ms = 0;
  RETURN_IF_ERROR(Check(cudaEventElapsedTime(&ms, start.e, stop.e), "reading an event"));
  return ms * 1e-3;
}

absl::StatusOr<Context*> GetContext() {
  static const absl::StatusOr<Context*> ctx = CreateContext();
  return ctx;
}

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(size_t bytes) {
  DeviceBuffer b;
  if (bytes == 0) return b;
  RETURN_IF_ERROR(Check(cudaMalloc(&b.data_, bytes), absl::StrCat("allocating ", bytes, " bytes")));
  b.bytes_ = bytes;
  // Zeros, not whatever the memory held: a kernel that scales an input by 0 (cuDNN's
  // fused convolution reads its output as z with alpha2 = 0) must not meet a NaN there.
  RETURN_IF_ERROR(Check(cudaMemset(b.data_, 0, bytes), "zeroing a buffer"));
  return b;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (data_) cudaFree(data_);
    data_ = o.data_;
    bytes_ = o.bytes_;
    o.data_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (data_) cudaFree(data_);
}

void RegisterKernel(const std::string& op, std::unique_ptr<Kernel> kernel) {
  Registry().Register(op, std::move(kernel));
}

const Kernel* FindKernel(absl::string_view op) { return Registry().Find(op); }

absl::Status ValidateKernels() { return Registry().Validate(OpRegistry::Global()); }

bool HasLayout(const Params& params) { return params.Str("layout", "plain") != "plain"; }

}  // namespace taso::cuda
