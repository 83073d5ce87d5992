// Shared command-line plumbing: flag parsing with usage text, and one clear error line.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"

namespace taso::cli {

// Parses flags; returns the positional arguments (without the program name). Flag names
// may be written with hyphens (--timeout-ms) or underscores (--timeout_ms).
inline std::vector<std::string> Init(int argc, char** argv, const char* usage) {
  absl::SetProgramUsageMessage(usage);
  // --help lists the flags defined by the tools' own sources (absl's default looks for a
  // file named like the binary, and taso-opt's is taso_opt.cc).
  absl::FlagsUsageConfig config;
  config.contains_help_flags = [](absl::string_view file) { return absl::StrContains(file, "src/tools/"); };
  absl::SetFlagsUsageConfig(config);
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--") break;
    if (a.size() < 3 || a.substr(0, 2) != "--") continue;
    for (char* c = argv[i] + 2; *c && *c != '='; ++c)
      if (*c == '-') *c = '_';
  }
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

// Whether a file can be made at `path` (its directory exists and may be written), so that
// a command finds out before its work rather than after it; `what` names the file.
inline absl::Status CheckWritable(const std::string& path, const char* what) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  std::error_code error;
  const std::string quoted = "'" + path + "'";
  if (!std::filesystem::is_directory(dir, error))
    return absl::NotFoundError(std::string("cannot write the ") + what + " " + quoted + ": the directory '" +
                               dir.string() + "' does not exist");
  if (access(dir.c_str(), W_OK) != 0)
    return absl::PermissionDeniedError(std::string("cannot write the ") + what + " " + quoted + ": the directory '" +
                                       dir.string() + "' is not writable");
  if (std::filesystem::is_directory(path, error))
    return absl::InvalidArgumentError(std::string("cannot write the ") + what + " " + quoted + ": it is a directory");
  return absl::OkStatus();
}

inline int Usage(const char* tool, const std::string& message) {
  std::fprintf(stderr, "%s: error: %s (see --help)\n", tool, message.c_str());
  return 2;
}

}  // namespace taso::cli
