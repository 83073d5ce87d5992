// What a fuzz entry does on a finding: print what broke and abort, so libFuzzer saves the
// input and the replay test fails.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"

namespace taso::fuzz {

[[noreturn]] inline void Finding(const std::string& what) {
  std::fprintf(stderr, "fuzz finding: %s\n", what.c_str());
  std::abort();
}

}  // namespace taso::fuzz

// Checks a property the code under test promises; the arguments describe the case.
#define FUZZ_CHECK(cond, ...)                                                                   \
  do {                                                                                          \
    if (!(cond)) ::taso::fuzz::Finding(absl::StrCat("check failed: " #cond ": ", __VA_ARGS__)); \
  } while (false)
