// Built where the CUDA toolkit or cuDNN is missing.
#include "taso/backends.h"

namespace taso {

BackendInfo CudaBackendInfo() {
  return BackendInfo{"cuda", false, false, "not built: the CUDA toolkit or cuDNN was not found at configure time"};
}

}  // namespace taso
