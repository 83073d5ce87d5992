// The memory left on the machine for what a run starts beside itself (ONNX Runtime's
// sessions in the worker), so that a comparison of large models is made the way it fits.
#pragma once

#include <cstdint>
#include <optional>

namespace taso {

// /proc/meminfo's MemAvailable, or what a cgroup's memory limit leaves (v2 memory.max
// less memory.current, v1 memory.limit_in_bytes less memory.usage_in_bytes) where that
// is less; nothing where neither can be read. The environment variable
// TASO_AVAILABLE_MEMORY_BYTES, where set to a whole number, is taken instead: for a
// machine whose limits are not in those files, and for tests of the paths that run short.
std::optional<int64_t> AvailableMemoryBytes();

}  // namespace taso
