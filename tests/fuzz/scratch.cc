#include "scratch.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "fuzz_check.h"

namespace taso::fuzz {

namespace {

// Made on construction, removed with its files when the process exits.
struct ScratchDir {
  ScratchDir() : path(std::filesystem::temp_directory_path() / absl::StrCat("taso-fuzz-", getpid())) {
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  std::filesystem::path path;
};

}  // namespace

std::string ScratchPath(absl::string_view name) {
  static const ScratchDir dir;
  return (dir.path / std::string(name)).string();
}

std::string WriteScratchFile(absl::string_view name, absl::string_view bytes) {
  const std::string path = ScratchPath(name);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) Finding(absl::StrCat("cannot write the scratch file ", path));
  return path;
}

std::string SourceFile(absl::string_view relative_path) {
  const std::string path = absl::StrCat(TASO_SOURCE_DIR, "/", relative_path);
  std::ifstream f(path, std::ios::binary);
  if (!f) Finding(absl::StrCat("cannot read ", path));
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace taso::fuzz
