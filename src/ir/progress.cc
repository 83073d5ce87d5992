#include "taso/ir/progress.h"

#include <unistd.h>

#include <utility>

#include "absl/strings/str_format.h"

namespace taso {

ProgressLine ProgressLine::OnStderr() { return ProgressLine(isatty(fileno(stderr)) ? stderr : nullptr); }

ProgressLine ProgressLine::AsLog(std::FILE* out) {
  ProgressLine line(out);
  line.log_ = true;
  line.first_start_ = std::chrono::steady_clock::now();
  return line;
}

ProgressLine::ProgressLine(ProgressLine&& other) noexcept
    : out_(std::exchange(other.out_, nullptr)),
      log_(other.log_),
      first_start_(other.first_start_),
      step_(std::move(other.step_)),
      step_start_(other.step_start_),
      last_shown_(other.last_shown_),
      shown_(other.shown_) {}

void ProgressLine::Start(absl::string_view step, absl::string_view detail) {
  step_ = std::string(step);
  step_start_ = std::chrono::steady_clock::now();
  Show(detail);
}

void ProgressLine::Update(absl::string_view detail) {
  const std::chrono::steady_clock::duration interval =
      log_ ? std::chrono::steady_clock::duration(kLogInterval) : std::chrono::steady_clock::duration(kInterval);
  if (std::chrono::steady_clock::now() - last_shown_ < interval) return;
  Show(detail);
}

void ProgressLine::Show(absl::string_view detail) {
  if (!out_) return;
  last_shown_ = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(last_shown_ - step_start_).count();
  if (log_) {
    const double since_first = std::chrono::duration<double>(last_shown_ - first_start_).count();
    absl::FPrintF(out_, "[%6.1f s] %s%s%s (%.1f s into it)\n", since_first, step_, detail.empty() ? "" : ": ", detail,
                  seconds);
    std::fflush(out_);
    return;
  }
  // \r returns to the line's start and \033[K erases what a longer text left there.
  absl::FPrintF(out_, "\r\033[K%s%s%s (%.1f s)", step_, detail.empty() ? "" : ": ", detail, seconds);
  std::fflush(out_);
  shown_ = true;
}

void ProgressLine::Clear() {
  if (!out_ || !shown_ || log_) return;
  std::fputs("\r\033[K", out_);
  std::fflush(out_);
  shown_ = false;
}

}  // namespace taso
