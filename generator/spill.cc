#include "spill.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"

namespace taso::gen {

namespace {
constexpr absl::string_view kSpillPrefix = "taso-gen-";
}  // namespace

std::string DefaultSpillParent() {
  const char* t = std::getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

SpillFolder::SpillFolder(std::string parent) : parent_(parent.empty() ? DefaultSpillParent() : std::move(parent)) {}

bool SpillFolder::made() const {
  absl::MutexLock lock(&mu_);
  return !folder_.empty();
}

absl::StatusOr<std::string> SpillFolder::Path() {
  absl::MutexLock lock(&mu_);
  if (folder_.empty()) {
    absl::StatusOr<TemporaryFolder> made = TemporaryFolder::Make(parent_, kSpillPrefix);
    if (!made.ok()) return absl::PermissionDeniedError(absl::StrCat("no spill folder: ", made.status().message()));
    folder_ = *std::move(made);
  }
  return folder_.path();
}

std::vector<std::string> RemoveStaleSpillFolders(const std::string& parent) {
  std::vector<std::string> lines;
  for (const RemovedFolder& removed :
       RemoveFoldersOfEndedRuns(parent.empty() ? DefaultSpillParent() : parent, kSpillPrefix))
    lines.push_back(
        absl::StrCat("removed ", removed.path, " (", removed.bytes >> 20, " MiB), left by a taso-gen run that ended"));
  return lines;
}

absl::Status AppendToFile(SpillFolder* folder, const std::string& name, int* fd, const char* bytes, uint64_t n) {
  if (*fd < 0) {
    absl::StatusOr<std::string> dir = folder->Path();
    if (!dir.ok()) return dir.status();
    const std::string path = absl::StrCat(*dir, "/", name);
    *fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (*fd < 0) return absl::PermissionDeniedError(absl::StrCat("cannot make '", path, "'"));
  }
  while (n > 0) {
    const ssize_t w = write(*fd, bytes, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return absl::DataLossError(absl::StrCat("cannot write the spill file ", name, " (disk full?)"));
    bytes += w;
    n -= static_cast<uint64_t>(w);
  }
  return absl::OkStatus();
}

absl::Status ReadAt(int fd, const std::string& name, uint64_t offset, uint64_t bytes, char* out) {
  while (bytes > 0) {
    const ssize_t r = pread(fd, out, bytes, static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return absl::DataLossError(absl::StrCat("cannot read the spill file ", name));
    out += r;
    offset += static_cast<uint64_t>(r);
    bytes -= static_cast<uint64_t>(r);
  }
  return absl::OkStatus();
}

void CloseFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

}  // namespace taso::gen
