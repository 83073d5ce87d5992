// Shared command-line plumbing: flag parsing with usage text, and one clear error line.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"

namespace taso::cli {

// Parses flags; returns the positional arguments (without the program name).
inline std::vector<std::string> Init(int argc, char** argv, const char* usage) {
  absl::SetProgramUsageMessage(usage);
  std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  return std::vector<std::string>(rest.begin() + 1, rest.end());
}

// Prints "<tool>: error: <message>" and returns the exit code for it.
inline int Fail(const char* tool, const absl::Status& s) {
  std::string message(s.message());
  for (char& c : message)
    if (c == '\n' || c == '\r') c = ' ';  // always one line
  std::fprintf(stderr, "%s: error: %s\n", tool, message.c_str());
  return s.code() == absl::StatusCode::kInvalidArgument || s.code() == absl::StatusCode::kNotFound ? 2 : 1;
}

inline int Usage(const char* tool, const std::string& message) {
  std::fprintf(stderr, "%s: error: %s (see --help)\n", tool, message.c_str());
  return 2;
}

}  // namespace taso::cli
