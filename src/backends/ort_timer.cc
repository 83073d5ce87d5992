#include "taso/backends/ort_timer.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "taso/status_macros.h"

namespace taso {

namespace {

// A directory of its own, removed with this object.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "taso_ort_timer_XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

PairTiming TimingFromPairs(const OrtWorker::PairMedians& medians, int rounds) {
  const size_t n = medians.a.size();
  PairTiming t;
  t.pairs = static_cast<int>(n);
  t.runs = t.pairs * rounds;
  double log_a = 0, log_b = 0, sum = 0, sum_sq = 0;
  for (size_t p = 0; p < n; ++p) {
    log_a += std::log(medians.a[p]);
    log_b += std::log(medians.b[p]);
    const double r = std::log(medians.a[p] / medians.b[p]);
    sum += r;
    sum_sq += r * r;
  }
  t.a_seconds = std::exp(log_a / n);
  t.b_seconds = std::exp(log_b / n);
  if (n < 2) {
    t.spread = std::numeric_limits<double>::infinity();
    return t;
  }
  const double mean = sum / n;
  const double variance = std::max(0.0, (sum_sq - n * mean * mean) / (n - 1));
  t.spread = 2 * std::sqrt(variance / n);
  return t;
}

OrtTimer::OrtTimer(std::shared_ptr<OrtWorker> worker, Options options)
    : worker_(std::move(worker)), options_(options) {}

std::string OrtTimer::name() const {
  return absl::StrFormat("ONNX Runtime %s (CPU, level all, %d thread%s)", worker_->version(), options_.threads,
                         options_.threads == 1 ? "" : "s");
}

absl::StatusOr<PairTiming> OrtTimer::Compare(const OnnxModel& a, const OnnxModel& b) {
  TempDir dir;
  if (dir.path().empty()) return absl::InternalError("cannot make a temporary directory for the models timed");
  const std::string a_path = dir.path() + "/a.onnx", b_path = dir.path() + "/b.onnx";
  RETURN_IF_ERROR(ExportOnnxFile(a, a_path));
  RETURN_IF_ERROR(ExportOnnxFile(b, b_path));
  // Two pairs a request (one made in each order), so that a request on a large model
  // stays well within the worker's timeout.
  constexpr int kPairsPerRequest = 2;
  OrtWorker::PairMedians all;
  PairTiming timing;
  while (all.a.size() < static_cast<size_t>(options_.max_pairs)) {
    ASSIGN_OR_RETURN(const OrtWorker::PairMedians more,
                     worker_->Compare(a_path, b_path, options_.threads, kPairsPerRequest, options_.rounds));
    all.a.insert(all.a.end(), more.a.begin(), more.a.end());
    all.b.insert(all.b.end(), more.b.begin(), more.b.end());
    const size_t timed = all.a.size();
    if (timed < static_cast<size_t>(options_.first_pairs) && timed < static_cast<size_t>(options_.max_pairs)) continue;
    timing = TimingFromPairs(all, options_.rounds);
    if (timing.spread <= options_.target_spread) break;
  }
  return timing;
}

}  // namespace taso
