// The cuda executor: runs a whole graph on the GPU, each operator with the kernel the
// cuda cost model measures (src/backends/cuda/kernels/: cuDNN, cuBLAS, our own), an operator without one
// with its reference kernel on the host (its inputs copied out and its outputs back).
// Weight-only subgraphs are computed once when the graph is prepared.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "taso/backends/kernel_executor.h"
#include "taso/ir/graph.h"

namespace taso {

// Fails with a clear error where this build has no cuda backend or no GPU can be used.
absl::StatusOr<std::unique_ptr<KernelExecutor>> MakeCudaExecutor(const Graph& graph);

// The device key under which the cuda backend keeps the convolution algorithms cuDNN found
// in the default cost cache file, so that every process on this GPU runs the same ones;
// fails as MakeCudaExecutor does.
absl::StatusOr<std::string> CudaChoicesDevice();

}  // namespace taso
