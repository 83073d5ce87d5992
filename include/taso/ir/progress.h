// Progress of a long command on one line of a terminal: each step (import, search,
// self-check, ...) rewrites the line in place as it advances, and the line is erased at
// the end so that the command's summary stands alone. Where stderr is not a terminal
// (a log, a pipe, a test), nothing is written, unless asked for as a log (`AsLog`): then
// each step is a line of its own, with the seconds since the first, and the current
// step's advance at most every kLogInterval.
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
  // Writes to `out` as a log, a line per step (for a run whose stderr goes to a file).
  static ProgressLine AsLog(std::FILE* out);
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
  static constexpr std::chrono::seconds kLogInterval{10};

 private:
  void Show(absl::string_view detail);

  std::FILE* out_;
  bool log_ = false;
  std::chrono::steady_clock::time_point first_start_;
  std::string step_;
  std::chrono::steady_clock::time_point step_start_, last_shown_;
  bool shown_ = false;  // the line holds text
};

}  // namespace taso
