// Built only where the CUDA toolkit and cuDNN are found.
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "absl/strings/str_cat.h"
#include "taso/backends/backends.h"

namespace taso {

BackendInfo CudaBackendInfo() {
  BackendInfo info{"cuda", true, false, ""};
  int runtime = 0, blas_major = 0, blas_minor = 0;
  cudaRuntimeGetVersion(&runtime);
  cublasGetProperty(MAJOR_VERSION, &blas_major);
  cublasGetProperty(MINOR_VERSION, &blas_minor);
  info.detail = absl::StrCat("CUDA runtime ", runtime / 1000, ".", (runtime % 1000) / 10, ", cuDNN ", cudnnGetVersion(),
                             ", cuBLAS ", blas_major, ".", blas_minor);
  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    absl::StrAppend(&info.detail, "; no usable GPU (", err != cudaSuccess ? cudaGetErrorString(err) : "0 devices", ")");
    return info;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  info.usable = true;
  absl::StrAppend(&info.detail, "; GPU 0: ", prop.name);
  return info;
}

}  // namespace taso
