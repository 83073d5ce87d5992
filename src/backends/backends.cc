#include "taso/backends/backends.h"

#include "absl/strings/str_cat.h"
#include "oneapi/dnnl/dnnl.h"

namespace taso {

BackendInfo CudaBackendInfo();  // cuda_info.cc, or no_cuda.cc in builds without CUDA

std::vector<BackendInfo> AvailableBackends() {
  const dnnl_version_t* v = dnnl_version();
  BackendInfo cpu{"cpu", true, true, absl::StrCat("oneDNN ", v->major, ".", v->minor, ".", v->patch)};
  BackendInfo analytic{"analytic", true, true, "roofline estimate from FLOPs and bytes"};
  return {cpu, CudaBackendInfo(), analytic};
}

}  // namespace taso
