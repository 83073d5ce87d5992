// Shared command-line plumbing: flag parsing with usage text, and one clear error line.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/flags/commandlineflag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "taso/ir/temporary_folder.h"
#include "taso/ir/tensor.h"

namespace taso::cli {

// The name of a flag argument written --name or --name=value, if it is one of a list flag
// (std::vector<std::string>); else empty.
inline std::string ListFlagName(std::string_view arg) {
  if (arg.size() < 3 || arg.substr(0, 2) != "--") return "";
  const std::string name(arg.substr(2, arg.find('=') - 2));
  const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  return flag && flag->IsOfType<std::vector<std::string>>() ? name : "";
}

// Abseil keeps only the last value of a flag given twice. A list flag given several times, as
// --input_shape=a --input_shape b, takes them all: its values are joined, comma-separated, into
// one argument at the first one's place. Expects flag names with underscores.
inline std::vector<char*> JoinRepeatedListFlags(int argc, char** argv) {
  static std::deque<std::string> joined;  // arguments made here, alive while parsing reads them
  std::vector<char*> out;
  std::vector<std::pair<std::string, size_t>> places;  // each list flag's name, its place in `out`
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") {
      out.insert(out.end(), argv + i, argv + argc);
      break;
    }
    const std::string name = ListFlagName(arg);
    const bool value_next = arg.find('=') == std::string_view::npos;
    if (name.empty() || (value_next && i + 1 >= argc)) {
      out.push_back(argv[i]);  // absl parses it (and says what is missing)
      continue;
    }
    const std::string value(value_next ? std::string_view(argv[++i]) : arg.substr(arg.find('=') + 1));
    auto place = std::find_if(places.begin(), places.end(), [&](const auto& p) { return p.first == name; });
    if (place == places.end()) {
      joined.push_back("--" + name + "=" + value);
      places.emplace_back(name, out.size());
      out.push_back(joined.back().data());
    } else {
      joined.push_back(std::string(out[place->second]) + "," + value);
      out[place->second] = joined.back().data();
    }
  }
  return out;
}

// Parses flags; returns the positional arguments (without the program name). Flag names
// may be written with hyphens (--timeout-ms) or underscores (--timeout_ms). From here on, a
// tool ended by Ctrl-C, SIGTERM or SIGHUP removes its temporary folders first.
inline std::vector<std::string> Init(int argc, char** argv, const char* usage) {
  RemoveTemporaryFoldersOnSignal();
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
  std::vector<char*> joined = JoinRepeatedListFlags(argc, argv);
  std::vector<char*> rest = absl::ParseCommandLine(static_cast<int>(joined.size()), joined.data());
  return std::vector<std::string>(rest.begin() + 1, rest.end());
}

// --input-shape's values, each NAME=D0xD1x... (every dimension a positive whole number),
// by input name.
inline absl::StatusOr<absl::flat_hash_map<std::string, Shape>> ParseInputShapes(const std::vector<std::string>& specs) {
  absl::flat_hash_map<std::string, Shape> shapes;
  for (const std::string& spec : specs) {
    const std::vector<std::string> parts = absl::StrSplit(spec, absl::MaxSplits('=', 1));
    auto bad = [&spec] {
      return absl::InvalidArgumentError(
          absl::StrCat("--input-shape '", spec, "' is not NAME=D0xD1x... with positive whole numbers"));
    };
    if (parts.size() != 2 || parts[0].empty()) return bad();
    Shape shape;
    for (absl::string_view d : absl::StrSplit(parts[1], 'x')) {
      int64_t size = 0;
      if (!absl::SimpleAtoi(d, &size) || size < 1) return bad();
      shape.push_back(size);
    }
    if (!shapes.emplace(parts[0], std::move(shape)).second)
      return absl::InvalidArgumentError(absl::StrCat("--input-shape gives input '", parts[0], "' twice"));
  }
  return shapes;
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
