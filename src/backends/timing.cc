#include "backends/timing.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "taso/ir/status_macros.h"

namespace taso::timing {

double Median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

absl::StatusOr<double> MedianSeconds(const TimedRun& run, int runs) {
  // Two runs and a fifth of a second at least: a GPU's clocks rise over its first
  // milliseconds of work, and the same ResNet-50 graph timed 3.55 to 4.17 ms on an H200
  // in processes that warmed up with two runs.
  constexpr double kWarmUpSeconds = 0.2;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0;
       i < 2 || std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < kWarmUpSeconds; ++i)
    RETURN_IF_ERROR(run().status());
  std::vector<double> times;
  for (int i = 0; i < std::max(1, runs); ++i) {
    ASSIGN_OR_RETURN(double t, run());
    times.push_back(t);
  }
  return Median(std::move(times));
}

absl::StatusOr<std::vector<double>> KernelMediansInTurn(const std::vector<TimedRun>& runs, size_t paced) {
  const size_t n = runs.size();
  paced = std::max<size_t>(1, std::min(paced, n));  // n == 0 runs no round
  for (int i = 0; i < 2; ++i)
    for (const TimedRun& run : runs) RETURN_IF_ERROR(run().status());
  std::vector<std::vector<double>> times(n);
  std::vector<double> totals(n, 0);
  auto enough = [&](size_t rounds) {
    if (rounds >= 10 && *std::min_element(totals.begin(), totals.begin() + paced) >= 10e-3) return true;
    // A slow kernel needs few runs for a steady median, and its measurement must not hold
    // up the search for seconds.
    return rounds >= 3 && *std::max_element(totals.begin(), totals.begin() + paced) >= 0.5;
  };
  for (size_t round = 0; n > 0 && round < 200 && !enough(round); ++round) {
    for (size_t k = 0; k < n; ++k) {
      const size_t which = (round + k) % n;
      const auto start = std::chrono::steady_clock::now();
      ASSIGN_OR_RETURN(double t, runs[which]());
      times[which].push_back(t);
      totals[which] += std::max(t, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }
  std::vector<double> medians;
  for (std::vector<double>& t : times) medians.push_back(Median(std::move(t)));
  return medians;
}

absl::StatusOr<std::pair<double, double>> InTurn(const TimedRun& a, const TimedRun& b, int runs) {
  // Runs of one model in a row, the first of them not kept; fewer where few are asked for
  // (a large model's runs take long enough for a steady median).
  runs = std::max(1, runs);
  const int block = std::min(5, runs + 1);
  for (int i = 0; i < 2; ++i) {
    RETURN_IF_ERROR(a().status());
    RETURN_IF_ERROR(b().status());
  }
  std::vector<double> ta, tb;
  const int blocks = (runs + block - 2) / (block - 1);
  for (int i = 0; i < blocks; ++i) {
    const bool a_first = i % 2 == 0;
    for (int k = 0; k < 2; ++k) {
      const bool is_a = (k == 0) == a_first;
      for (int r = 0; r < block; ++r) {
        ASSIGN_OR_RETURN(double t, is_a ? a() : b());
        if (r > 0) (is_a ? ta : tb).push_back(t);
      }
    }
  }
  return std::make_pair(Median(std::move(ta)), Median(std::move(tb)));
}

int WeightCopies(int64_t weight_bytes, int64_t activation_bytes, int64_t cache_bytes) {
  if (weight_bytes <= 0 || weight_bytes < 16 * activation_bytes) return 1;
  const int64_t wanted = (2 * cache_bytes + weight_bytes - 1) / weight_bytes;
  const int64_t memory_cap = std::max<int64_t>(1, (int64_t{512} << 20) / (weight_bytes + activation_bytes));
  return static_cast<int>(std::clamp<int64_t>(wanted, 1, std::min<int64_t>(64, memory_cap)));
}

int64_t LastLevelCacheBytes() {
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return l3 > 0 ? l3 : int64_t{32} << 20;
}

}  // namespace taso::timing
