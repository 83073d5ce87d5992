#include "taso/backends/ort_timer.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "taso/ir/graph.h"
#include "taso/ir/memory_limit.h"
#include "taso/ir/status_macros.h"
#include "taso/ir/tensor.h"

namespace taso {

namespace {

// Bytes of a graph's weights as stored.
int64_t WeightBytes(const Graph& graph) {
  int64_t bytes = 0;
  for (ValueId v : graph.weights()) {
    const TensorData& data = *graph.value(v).data;
    bytes += data.numel() * ElementBytes(static_cast<int32_t>(data.dtype()));
  }
  return bytes;
}

}  // namespace

OrtTimer::OrtTimer(std::shared_ptr<OrtWorker> worker, int threads, PairLimits limits, int64_t own_worker_bytes)
    : worker_(std::move(worker)), threads_(threads), limits_(limits), own_worker_bytes_(own_worker_bytes) {}

OrtTimer::~OrtTimer() {
  std::error_code ignored;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
}

absl::StatusOr<std::string> OrtTimer::ExportedPath(const OnnxModel& model) {
  if (dir_.empty()) {
    std::string pattern = (std::filesystem::temp_directory_path() / "taso_ort_timer_XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
      return absl::InternalError("cannot make a temporary directory for the models timed");
    dir_ = pattern;
  }
  const uint64_t key = absl::HashOf(model.graph.StructuralHash(), model.opset, model.shell.get(), model.external_data,
                                    model.external_data_dir);
  if (auto it = exported_.find(key); it != exported_.end()) return it->second;
  const std::string path = absl::StrCat(dir_, "/model", exported_.size(), ".onnx");
  RETURN_IF_ERROR(ExportOnnxFile(model, path));
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
  clock_.seconds_spent += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::unique_ptr<OrtWorker> own;
  if (std::max(WeightBytes(a.graph), WeightBytes(b.graph)) >= own_worker_bytes_) {
    ASSIGN_OR_RETURN(own, OrtWorker::Start());
  }
  OrtWorker& worker = own != nullptr ? *own : *worker_;
  // Two pairs a request (one made in each order), so that a request on a large model
  // stays well within the worker's timeout.
  return TimeInPairs(limits_, clock_,
                     [&](int rounds) { return worker.Compare(a_path, b_path, threads_, /*pairs=*/2, rounds); });
}

bool OrtTimer::OutOfTime() const { return clock_.OutOfTime(limits_.seconds); }

}  // namespace taso
