#include "spill.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace taso::gen {
namespace {

// The folders the signal handler removes: plain arrays, since a handler may touch nothing
// that allocates or locks.
constexpr int kSlots = 64;
constexpr size_t kPathMax = 4096;
char g_paths[kSlots][kPathMax];
std::atomic<int> g_used[kSlots];

int Register(const std::string& path) {
  if (path.size() >= kPathMax) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (g_used[i].compare_exchange_strong(expected, 2)) {  // 2: being written
      std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
      g_used[i].store(1);
      return i;
    }
  }
  return -1;
}

void Unregister(int slot) {
  if (slot >= 0) g_used[slot].store(0);
}

// Removes a folder of plain files with system calls only (async-signal-safe).
void RemoveFlatFolder(const char* path) {
  alignas(8) static char buf[8192];
  for (int pass = 0; pass < 64; ++pass) {
    const int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) break;
    bool removed = false;
    for (long n; (n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0;)
      for (long at = 0; at < n;) {
        struct Entry {
          uint64_t ino;
          int64_t off;
          unsigned short reclen;
          unsigned char type;
          char name[1];
        };
        const auto* e = reinterpret_cast<const Entry*>(buf + at);
        at += e->reclen;
        if (std::strcmp(e->name, ".") == 0 || std::strcmp(e->name, "..") == 0) continue;
        removed |= unlinkat(fd, e->name, 0) == 0;
      }
    close(fd);
    if (!removed) break;
  }
  rmdir(path);
}

void OnSignal(int sig) {
  for (int i = 0; i < kSlots; ++i)
    if (g_used[i].load() == 1) RemoveFlatFolder(g_paths[i]);
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

std::string DefaultSpillParent() {
  const char* t = std::getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

SpillFolder::SpillFolder(std::string parent) : parent_(parent.empty() ? DefaultSpillParent() : std::move(parent)) {}

SpillFolder::~SpillFolder() {
  absl::MutexLock lock(&mu_);
  if (path_.empty()) return;
  Unregister(slot_);
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

bool SpillFolder::made() const {
  absl::MutexLock lock(&mu_);
  return !path_.empty();
}

absl::StatusOr<std::string> SpillFolder::Path() {
  absl::MutexLock lock(&mu_);
  if (!path_.empty()) return path_;
  std::string pattern = parent_ + "/taso-gen-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr)
    return absl::PermissionDeniedError(absl::StrCat("cannot make a spill folder in '", parent_, "'"));
  slot_ = Register(pattern);
  std::ofstream(pattern + "/owner") << getpid() << "\n";
  path_ = pattern;
  return path_;
}

void InstallSpillCleanup() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

std::vector<std::string> RemoveStaleSpillFolders(const std::string& parent_in) {
  const std::string parent = parent_in.empty() ? DefaultSpillParent() : parent_in;
  std::vector<std::string> lines;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("taso-gen-", 0) != 0 || !entry.is_directory(ec)) continue;
    std::ifstream owner(entry.path() / "owner");
    long pid = 0;
    if (!(owner >> pid) || pid <= 0) {
      lines.push_back(absl::StrCat("spill folder ", entry.path().string(),
                                   " names no owner (an older taso-gen's?); remove it if no taso-gen is running"));
      continue;
    }
    if (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // its run goes on
    std::uintmax_t bytes = 0;
    for (const auto& f : std::filesystem::directory_iterator(entry.path(), ec)) bytes += f.file_size(ec);
    std::filesystem::remove_all(entry.path(), ec);
    lines.push_back(absl::StrCat("removed ", entry.path().string(), " (", bytes >> 20,
                                 " MiB), left by a taso-gen run that ended (pid ", pid, ")"));
  }
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
