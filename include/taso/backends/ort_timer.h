// End-to-end timing of two models in ONNX Runtime through the worker (ort_worker.h):
// session pairs made in both orders, runs in turn, more pairs until the ratio is known to
// within 1% (a 2% difference resolved) or lies well beyond its spread (1.5 times a spread
// of 3% at most), a bound on the pairs is reached or the timer's time is spent
// (paired_timing.h; the time includes exporting the models).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"

#include "taso/backends/ort_worker.h"
#include "taso/backends/paired_timing.h"
#include "taso/backends/runtime_timer.h"
#include "taso/ir/graph.h"
#include "taso/ir/temporary_folder.h"

namespace taso {

class SharedWeightsFile;

// How a comparison of large models uses memory. Models whose weights take
// `own_worker_bytes` are compared in a worker of their own, stopped once they are: the
// worker's glibc keeps what it frees for reuse (its malloc settings, ort_worker.cc), so two
// sessions of a 2.9 GB model stayed resident in the shared worker for the rest of a run,
// beside taso-opt's own copies for the checks after the timing. Where two sessions would
// not fit in the memory available (SessionsThatFit), one is loaded at a time; where one
// would not, the models are not timed (a ResourceExhausted error).
// Models of `shared_weights_bytes` or more are written with their weights in one data file
// that the timer's models share (SharedWeightsFile), each weight written once.
struct OrtTimerMemory {
  int64_t own_worker_bytes = int64_t{256} << 20;
  int64_t shared_weights_bytes = int64_t{256} << 20;
  // What the sessions may take; read from the machine at each comparison where unset.
  std::optional<int64_t> available_bytes;
};

// The memory one ONNX Runtime session of a model needs, estimated: its weights, 16-bit
// floats at 4 bytes an element (the CPU kernels compute them as float32).
int64_t SessionBytes(const Graph& graph);

enum class SessionsAtOnce { kTwo, kOne, kNone };
// How many sessions of `session_bytes` fit in `available` (each with a tenth more and
// 256 MB of working memory beside them); two where the memory is not known.
SessionsAtOnce SessionsThatFit(int64_t session_bytes, std::optional<int64_t> available);
// Where not even one session fits (SessionsThatFit kNone): why, in one line naming both
// figures; else "".
std::string NoRoomForSession(int64_t session_bytes, std::optional<int64_t> available);

// The options of a worker of a comparison's own, for models of `session_bytes` a session:
// each request makes four sessions (two pairs), so its timeout grows beyond the default by
// four reads of the weights at 50 MB/s (a session of a 2.9 GB decoder took 8 s here; one
// of a 7B model in float32, 28 GB, would take minutes).
OrtWorkerOptions WorkerForSessions(int64_t session_bytes);

class OrtTimer : public RuntimeTimer {
 public:
  // `threads`: ONNX Runtime's intra-op threads, 0 for its default session's.
  OrtTimer(std::shared_ptr<OrtWorker> worker, int threads, PairLimits limits = {}, OrtTimerMemory memory = {});
  ~OrtTimer() override;
  OrtTimer(const OrtTimer&) = delete;
  OrtTimer& operator=(const OrtTimer&) = delete;
  std::string name() const override;
  absl::StatusOr<PairTiming> Compare(const OnnxModel& a, const OnnxModel& b) override;
  bool OutOfTime() const override;

 private:
  // The model's file: exported on its first comparison, then reused (the speed check times
  // the input against each candidate, and exporting ResNet-50 takes over a second).
  absl::StatusOr<std::string> ExportedPath(const OnnxModel& model);

  std::shared_ptr<OrtWorker> worker_;
  int threads_;
  PairLimits limits_;
  OrtTimerMemory memory_;
  TemporaryFolder dir_;                                  // of the exported models, made on first use
  std::unique_ptr<SharedWeightsFile> weights_;           // in dir_, made on first use
  absl::flat_hash_map<uint64_t, std::string> exported_;  // by the model's hash
  TimerClock clock_;
};

}  // namespace taso
