// Timing whole-graph runs the same way on every executor: warm-up runs, then the median
// of timed runs, two graphs in turn so that a change in the machine's speed weighs on
// both alike.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace taso::timing {

// One run; returns its seconds.
using TimedRun = std::function<absl::StatusOr<double>()>;

double Median(std::vector<double> v);
// Warm-up runs (two, and a fifth of a second at least), then the median of `runs` timed
// runs.
absl::StatusOr<double> MedianSeconds(const TimedRun& run, int runs);
// Median seconds of one run of each kernel, for their measured costs, the kernels run in
// turn (each round in a rotated order) so that a change in the machine's speed weighs on
// all alike: two warm-up runs each, then at least 10 runs and 10 ms of each (a small
// kernel's median over fewer runs is at the mercy of the machine's other work; a run
// that reports the median of a burst of runs counts the time the burst took), at most
// 200 rounds, or only 3 rounds once one kernel has run 0.5 s. Only the first `paced`
// kernels (all by default) count towards those bounds: a short reference kernel timed
// alongside the others must not make them run for its 10 ms.
absl::StatusOr<std::vector<double>> KernelMediansInTurn(const std::vector<TimedRun>& runs, size_t paced = SIZE_MAX);
// The medians of about `runs` runs each of `a` and `b`, timed in turn, a few runs of one
// in a row (and in the other order every other round: the one run second runs faster).
// The first run of each block is not kept: it finds the caches as the other model left
// them, where a model run again and again, as it is deployed, finds its own weights.
absl::StatusOr<std::pair<double, double>> InTurn(const TimedRun& a, const TimedRun& b, int runs);

// How many copies of a kernel, each with its own weights, a cost measurement runs in turn
// so that every run reads its weights from memory, as a run of a real model does (its
// weights far exceed the caches): enough to span twice `cache_bytes`, at most 64 and
// 512 MiB. One unless reading the weights is most of the kernel's run (16 times the bytes
// of its activations, as in a matrix-vector product): elsewhere copies would make the
// kernel look dearer than it is in a whole model's run.
int WeightCopies(int64_t weight_bytes, int64_t activation_bytes, int64_t cache_bytes);
// The last-level cache's size (32 MiB where the system does not say).
int64_t LastLevelCacheBytes();

}  // namespace taso::timing
