// Progress of a long command on one line of a terminal: each step (import, search,
// self-check, ...) rewrites the line in place as it advances, and the line is erased at
// the end so that the command's summary stands alone. Where stderr is not a terminal
// (a log, a pipe, a test), nothing is written.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include "absl/strings/string_view.h"

namespace taso {

class ProgressLine {
 public:
  // Writes to stderr when it is a terminal; otherwise off.
  static ProgressLine OnStderr();
  // Writes to `out`; off when it is null.
  explicit ProgressLine(std::FILE* out) : out_(out) {}
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ProgressLine(ProgressLine&& other) noexcept;
  ~ProgressLine() { Clear(); }

  bool on() const { return out_ != nullptr; }
  // Starts a step: "step: detail", shown at once.
  void Start(absl::string_view step, absl::string_view detail = "");
  // What the current step is doing now; shown at most every kInterval, with the time
  // the step has taken.
  void Update(absl::string_view detail);
  // Erases the line (the next output starts on a clean line).
  void Clear();

  static constexpr std::chrono::milliseconds kInterval{100};

 private:
  void Show(absl::string_view detail);

  std::FILE* out_;
  std::string step_;
  std::chrono::steady_clock::time_point step_start_, last_shown_;
  bool shown_ = false;  // the line holds text
};

}  // namespace taso
