// Files the entries hand to readers that take a path: one scratch folder per process, so
// parallel fuzzers do not share files.
#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace taso::fuzz {

// The path of `name` in this process's scratch folder (made on first use).
std::string ScratchPath(absl::string_view name);

// Writes `bytes` to ScratchPath(name) and returns the path; aborts if it cannot (the
// machine, not the input, is at fault).
std::string WriteScratchFile(absl::string_view name, absl::string_view bytes);

// The whole text of a file of the source tree (e.g. "axioms/signature.smt2"); aborts if
// it is missing.
std::string SourceFile(absl::string_view relative_path);

}  // namespace taso::fuzz
