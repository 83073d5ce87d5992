// How many threads a reference kernel runs on: as many as its work pays for.
#pragma once

#include <algorithm>
#include <thread>

namespace taso::ops {

// Work for more threads than this many multiply-adds each would cost more to start than it
// saves; and past this many threads a small tensor's work runs out.
inline constexpr double kMultiplyAddsPerThread = 4e6;
inline constexpr int kMaxThreads = 16;

// The threads for `multiply_adds` of work: one per kMultiplyAddsPerThread, at least one,
// at most the machine's cores and kMaxThreads.
inline int KernelThreads(double multiply_adds) {
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  return static_cast<int>(
      std::clamp(multiply_adds / kMultiplyAddsPerThread, 1.0, static_cast<double>(std::min(cores, kMaxThreads))));
}

}  // namespace taso::ops
