// The cuda backend's kernels: cuDNN convolutions, cuBLAS matrix products and our own
// CUDA kernels for the memory-bound operators (src/backends/cuda/kernels/), one per library operator that
// has one, registered by operator name like the cpu backend's. A kernel is prepared for
// given parameters and shapes; its run is queued on the backend's one stream and reads
// and writes device memory the executor (or a cost measurement) binds to its ports.
// Everything is float32 in plain row-major layout, computed without TF32.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "taso/backends/cost_cache.h"
#include "taso/ir/op.h"

namespace taso::cuda {

absl::Status Check(cudaError_t e, absl::string_view what);
absl::Status Check(cudnnStatus_t s, absl::string_view what);
absl::Status Check(cublasStatus_t s, absl::string_view what);

// The stream and library handles every kernel shares; fails where no GPU can be used.
struct Context {
  cudaStream_t stream = nullptr;
  cudnnHandle_t cudnn = nullptr;
  cublasHandle_t cublas = nullptr;
  // Where choices made by timing (cuDNN's convolution algorithms) are kept for later
  // processes, under `choices_device`: the default cost cache file (whatever file a
  // command's --cost-cache names); null where it cannot be opened.
  std::unique_ptr<CostCache> choices;
  std::string choices_device;
};
absl::StatusOr<Context*> GetContext();

// Device memory owned by the holder.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  static absl::StatusOr<DeviceBuffer> Allocate(size_t bytes);
  DeviceBuffer(DeviceBuffer&& o) noexcept : data_(o.data_), bytes_(o.bytes_) { o.data_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  ~DeviceBuffer();
  float* floats() const { return static_cast<float*>(data_); }
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// A CUDA event owned by the holder (null where it could not be made: recording it fails).
struct Event {
  cudaEvent_t e = nullptr;
  Event() { cudaEventCreate(&e); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() {
    if (e) cudaEventDestroy(e);
  }
};
// Seconds between two events recorded on a stream, once `stop` has been reached.
absl::StatusOr<double> SecondsBetween(const Event& start, const Event& stop);

// One prepared operator. Its ports are the operator's float inputs and outputs as device
// pointers (absent and non-float inputs stay null).
class Prepared {
 public:
  virtual ~Prepared() = default;
  // Queues one run on the context's stream (it does not wait).
  virtual absl::Status Enqueue(Context& ctx) = 0;
  void BindInput(size_t i, float* p) { Slot(inputs_, i) = p; }
  void BindOutput(size_t i, float* p) { Slot(outputs_, i) = p; }

 protected:
  const float* in(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  float* out(size_t i) const { return i < outputs_.size() ? outputs_[i] : nullptr; }

 private:
  static float*& Slot(std::vector<float*>& v, size_t i) {
    if (v.size() <= i) v.resize(i + 1, nullptr);
    return v[i];
  }
  std::vector<float*> inputs_, outputs_;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Fails when this backend has no kernel for these parameters or shapes. Called for
  // plain layouts only: the executor and the cost refuse a node with a cpu layout.
  virtual absl::StatusOr<std::unique_ptr<Prepared>> Prepare(Context& ctx, const Params& params,
                                                            absl::Span<const InputInfo> inputs,
                                                            absl::Span<const OutputType> outputs) const = 0;
};

// Registration (from static initializers) and lookup; see kernel_registry.h for how a
// duplicate or a name of no operator is caught.
void RegisterKernel(const std::string& op, std::unique_ptr<Kernel> kernel);
// Fails when a kernel's name was registered twice or names no operator.
absl::Status ValidateKernels();
const Kernel* FindKernel(absl::string_view op);

// A node the cpu backend's layout search marked blocked: the cuda backend runs plain
// layouts only.
bool HasLayout(const Params& params);

}  // namespace taso::cuda

#define TASO_REGISTER_CUDA_KERNEL(op, Class)                               \
  static const bool TASO_CONCAT_REG(taso_cuda_kernel_, __COUNTER__) = [] { \
    ::taso::cuda::RegisterKernel(op, std::make_unique<Class>());           \
    return true;                                                           \
  }()
