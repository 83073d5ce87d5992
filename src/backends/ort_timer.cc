#include "taso/backends/ort_timer.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "onnx/onnx_pb.h"
#include "taso/backends/available_memory.h"
#include "taso/ir/graph.h"
#include "taso/ir/memory_limit.h"
#include "taso/ir/status_macros.h"
#include "taso/ir/tensor.h"
#include "taso/onnx/shared_weights_file.h"

namespace taso {

int64_t SessionBytes(const Graph& graph) {
  int64_t bytes = 0;
  for (ValueId v : graph.weights()) {
    const TensorData& data = *graph.value(v).data;
    const auto type = static_cast<int32_t>(data.dtype());
    const bool half_float = type == onnx::TensorProto::FLOAT16 || type == onnx::TensorProto::BFLOAT16;
    bytes += data.numel() * (half_float ? 4 : ElementBytes(type));
  }
  return bytes;
}

SessionsAtOnce SessionsThatFit(int64_t session_bytes, std::optional<int64_t> available) {
  if (!available) return SessionsAtOnce::kTwo;
  const auto need = [&](int sessions) {
    return sessions * (session_bytes + session_bytes / 10) + (int64_t{256} << 20);
  };
  if (need(2) <= *available) return SessionsAtOnce::kTwo;
  if (need(1) <= *available) return SessionsAtOnce::kOne;
  return SessionsAtOnce::kNone;
}

std::string NoRoomForSession(int64_t session_bytes, std::optional<int64_t> available) {
  if (SessionsThatFit(session_bytes, available) != SessionsAtOnce::kNone) return "";
  return absl::StrFormat("a session of these models needs about %.1f GB, and %.1f GB of memory are available",
                         session_bytes * 1e-9, *available * 1e-9);
}

OrtWorkerOptions WorkerForSessions(int64_t session_bytes) {
  OrtWorkerOptions options;
  options.timeout += absl::Seconds(4.0 * static_cast<double>(session_bytes) / 50e6);
  return options;
}

OrtTimer::OrtTimer(std::shared_ptr<OrtWorker> worker, int threads, PairLimits limits, OrtTimerMemory memory)
    : worker_(std::move(worker)), threads_(threads), limits_(limits), memory_(memory) {}

OrtTimer::~OrtTimer() = default;

absl::StatusOr<std::string> OrtTimer::ExportedPath(const OnnxModel& model) {
  if (dir_.empty()) {
    absl::StatusOr<TemporaryFolder> made = TemporaryFolder::MakeInTemp("taso_ort_timer_");
    if (!made.ok())
      return absl::InternalError(absl::StrCat("no folder for the models timed: ", made.status().message()));
    dir_ = *std::move(made);
  }
  const uint64_t key = absl::HashOf(model.graph.StructuralHash(), model.opset, model.shell.get(), model.external_data,
                                    model.external_data_dir);
  if (auto it = exported_.find(key); it != exported_.end()) return it->second;
  const std::string path = absl::StrCat(dir_.path(), "/model", exported_.size(), ".onnx");
  if (SessionBytes(model.graph) < memory_.shared_weights_bytes) {
    RETURN_IF_ERROR(ExportOnnxFile(model, path));
  } else {
    if (weights_ == nullptr)
      weights_ = std::make_unique<SharedWeightsFile>(absl::StrCat(dir_.path(), "/weights", exported_.size(), ".data"));
    // A file a write failed to is not written to again: the next model starts another.
    if (absl::Status written = ExportOnnxFile(model, path, *weights_); !written.ok()) {
      weights_.reset();
      return written;
    }
  }
  exported_.emplace(key, path);
  return path;
}

std::string OrtTimer::name() const {
  return absl::StrFormat("ONNX Runtime %s (CPU, level all, %s)", worker_->version(), OrtThreadsName(threads_));
}

absl::StatusOr<PairTiming> OrtTimer::Compare(const OnnxModel& a, const OnnxModel& b) {
  const auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(const std::string a_path, ExportedPath(a));
  ASSIGN_OR_RETURN(const std::string b_path, ExportedPath(b));
  // Read once the models are written: where the temporary folder is in memory (tmpfs),
  // their files take it.
  const int64_t session_bytes = std::max(SessionBytes(a.graph), SessionBytes(b.graph));
  const std::optional<int64_t> available = memory_.available_bytes ? memory_.available_bytes : AvailableMemoryBytes();
  const SessionsAtOnce fit = SessionsThatFit(session_bytes, available);
  std::unique_ptr<OrtWorker> own;
  if (fit != SessionsAtOnce::kNone && session_bytes >= memory_.own_worker_bytes) {
    ASSIGN_OR_RETURN(own, OrtWorker::Start(WorkerForSessions(session_bytes)));
  }
  clock_.seconds_spent += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (fit == SessionsAtOnce::kNone) return absl::ResourceExhaustedError(NoRoomForSession(session_bytes, available));
  OrtWorker& worker = own != nullptr ? *own : *worker_;
  const bool apart = fit == SessionsAtOnce::kOne;
  // Two pairs a request (one made in each order), so that a request on a large model
  // stays well within the worker's timeout.
  ASSIGN_OR_RETURN(PairTiming timing, TimeInPairs(limits_, clock_, [&](int rounds) {
                     return worker.Compare(a_path, b_path, threads_, /*pairs=*/2, rounds, apart);
                   }));
  timing.sessions_apart = apart;
  return timing;
}

bool OrtTimer::OutOfTime() const { return clock_.OutOfTime(limits_.seconds); }

}  // namespace taso
