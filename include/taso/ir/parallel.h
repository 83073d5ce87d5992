// Runs work items on several threads, taking indices in order.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace taso {

// fn(thread, i) for i in [0, n) on `threads` threads; `thread` in [0, threads) names the
// calling thread, for per-thread state.
template <typename Fn>
void ParallelForThreads(size_t n, int threads, Fn fn) {
  threads = std::max(1, threads);
  std::atomic<size_t> next{0};
  auto work = [&](int thread) {
    for (size_t i; (i = next.fetch_add(1)) < n;) fn(thread, i);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& th : pool) th.join();
}

// fn(i) for i in [0, n) on `threads` threads.
template <typename Fn>
void ParallelFor(size_t n, int threads, Fn fn) {
  ParallelForThreads(n, threads, [&](int, size_t i) { fn(i); });
}

}  // namespace taso
