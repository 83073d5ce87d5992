#include "taso/ir/temporary_folder.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace taso {
namespace {

constexpr int kHandledSignals[] = {SIGINT, SIGTERM, SIGHUP};

// The folders alive, as a signal handler reads them: plain arrays, since a handler may
// touch nothing that allocates or locks. A slot is kFree, kWriting, kHeld or kClaimed (by
// a handler, which reads its path: it is never freed or written again, as the process is
// ending), and names the process that made its folder: a forked child has a copy of the
// table, and its handler leaves its parent's folders alone.
enum SlotState : int { kFree = 0, kHeld = 1, kWriting = 2, kClaimed = 3 };
constexpr int kSlots = 64;
constexpr size_t kPathMax = 4096;
char registered_paths[kSlots][kPathMax];
pid_t registered_by[kSlots];
std::atomic<int> slot_state[kSlots];

// The slot `path` takes, or -1 where all are taken (the folder is then removed by its
// object alone).
int Register(const std::string& path) {
  if (path.size() >= kPathMax) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (slot_state[i].compare_exchange_strong(expected, kWriting)) {
      std::memcpy(registered_paths[i], path.c_str(), path.size() + 1);
      registered_by[i] = getpid();
      slot_state[i].store(kHeld);
      return i;
    }
  }
  return -1;
}

void Unregister(int slot) {
  int held = kHeld;
  if (slot >= 0) slot_state[slot].compare_exchange_strong(held, kFree);
}

// Each folder holds this file, locked by its owner while the folder lives: the kernel
// releases the lock however the owner ends, SIGKILL and the OOM killer included. It is
// removed last, so that a removal cut short leaves a folder the next run still knows.
constexpr char kOwnerFile[] = ".owner";

// Removes what the folder `dir_fd` holds but `keep`, folders in it to `depth` levels, with
// system calls only (async-signal-safe). Passes until one removes nothing: another thread
// may still be writing files there.
void RemoveContents(int dir_fd, int depth, const char* keep = nullptr) {
  alignas(8) char entries[4096];
  for (int pass = 0; pass < 64; ++pass) {
    bool removed = false;
    lseek(dir_fd, 0, SEEK_SET);
    for (long n; (n = syscall(SYS_getdents64, dir_fd, entries, sizeof entries)) > 0;)
      for (long at = 0; at < n;) {
        const auto* entry = reinterpret_cast<const struct dirent64*>(entries + at);
        at += entry->d_reclen;
        const char* name = entry->d_name;
        if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
        if (keep != nullptr && std::strcmp(name, keep) == 0) continue;
        if (unlinkat(dir_fd, name, 0) == 0) {
          removed = true;
        } else if (errno == EISDIR && depth > 0) {
          const int inner = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (inner >= 0) {
            RemoveContents(inner, depth - 1);
            close(inner);
          }
          removed |= unlinkat(dir_fd, name, AT_REMOVEDIR) == 0;
        }
      }
    if (!removed) break;
  }
}

void RemoveFoldersAndEnd(int signal) {
  for (int i = 0; i < kSlots; ++i) {
    int held = kHeld;
    if (registered_by[i] != getpid() || !slot_state[i].compare_exchange_strong(held, kClaimed)) continue;
    const int fd = open(registered_paths[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      RemoveContents(fd, /*depth=*/8, kOwnerFile);
      unlinkat(fd, kOwnerFile, 0);
      close(fd);
    }
    rmdir(registered_paths[i]);
  }
  // Blocked while its handler runs, the signal ends the process once the handler returns.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigaction(signal, &default_action, nullptr);
  raise(signal);
}

// A folder's owner file is locked as soon as it is made; one unlocked for longer than this
// was left by a run that ended.
constexpr auto kOwnerGrace = std::chrono::minutes(1);

// This machine's name, as owner files hold it: a lock taken on another machine sharing the
// folder (NFS, Lustre) may not be seen here, so only this machine's folders are judged.
std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

// The locked owner file's descriptor, holding this machine's name; -1 where the file
// system refuses the lock (the file is then removed, and the folder never taken for one
// left behind).
int LockOwnerFile(const std::string& folder) {
  const std::string path = folder + "/" + kOwnerFile;
  const int fd = open(path.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  const std::string host = HostName() + "\n";
  if (flock(fd, LOCK_EX | LOCK_NB) == 0 && write(fd, host.data(), host.size()) == static_cast<ssize_t>(host.size()))
    return fd;
  close(fd);
  unlink(path.c_str());
  return -1;
}

// Whether `folder` (a directory, not a link, of this user's) was made on this machine by a
// run that has ended: its owner file names this machine, is a minute old, and no process
// holds its lock. Opened for writing, as some file systems lock only such files (and
// another user's is then not opened at all).
bool LeftByEndedRun(const std::filesystem::path& folder) {
  struct stat about {};
  if (lstat(folder.c_str(), &about) != 0 || !S_ISDIR(about.st_mode) || about.st_uid != geteuid()) return false;
  const std::filesystem::path owner = folder / kOwnerFile;
  std::error_code error;
  const auto written = std::filesystem::last_write_time(owner, error);
  if (error || std::filesystem::file_time_type::clock::now() - written < kOwnerGrace) return false;
  const int fd = open(owner.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  char host[257] = {};
  const ssize_t n = read(fd, host, sizeof host - 1);
  const bool here = n > 0 && std::string(host, static_cast<size_t>(n)) == HostName() + "\n";
  const bool unlocked = here && flock(fd, LOCK_EX | LOCK_NB) == 0;
  close(fd);
  return unlocked;
}

// Removes `folder`, its owner file last (see kOwnerFile).
void RemoveOwnerLast(const std::filesystem::path& folder) {
  std::vector<std::filesystem::path> entries;
  std::error_code error;
  for (std::filesystem::directory_iterator it(folder, error), end; !error && it != end; it.increment(error))
    if (it->path().filename() != kOwnerFile) entries.push_back(it->path());
  std::error_code ignored;
  for (const std::filesystem::path& entry : entries) std::filesystem::remove_all(entry, ignored);
  std::filesystem::remove_all(folder, ignored);
}

void InstallHandlers() {
  for (int signal : kHandledSignals) {
    struct sigaction current {};
    if (sigaction(signal, nullptr, &current) != 0 || current.sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_handler = RemoveFoldersAndEnd;
    sigemptyset(&action.sa_mask);
    for (int other : kHandledSignals) sigaddset(&action.sa_mask, other);  // one cleans at a time
    sigaction(signal, &action, nullptr);
  }
}

}  // namespace

std::vector<RemovedFolder> RemoveFoldersOfEndedRuns(const std::filesystem::path& parent, absl::string_view prefix) {
  std::vector<RemovedFolder> left;
  std::error_code error;
  for (std::filesystem::directory_iterator it(parent, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.size() == prefix.size() + 6 && absl::StartsWith(name, prefix) && LeftByEndedRun(it->path()))
      left.push_back({it->path().string()});
  }
  for (RemovedFolder& folder : left) {
    std::error_code walk, size;
    for (std::filesystem::recursive_directory_iterator it(folder.path, walk), end; !walk && it != end;
         it.increment(walk))
      if (it->is_regular_file(size)) folder.bytes += it->file_size(size);
    RemoveOwnerLast(folder.path);
  }
  return left;
}

absl::StatusOr<TemporaryFolder> TemporaryFolder::Make(const std::filesystem::path& parent, absl::string_view prefix) {
  RemoveFoldersOfEndedRuns(parent, prefix);
  std::string pattern = (parent / absl::StrCat(prefix, "XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr)
    return absl::PermissionDeniedError(
        absl::StrCat("cannot make a folder in '", parent.string(), "' (", std::strerror(errno), ")"));
  const int slot = Register(pattern);
  const int owner_fd = LockOwnerFile(pattern);
  return TemporaryFolder(std::move(pattern), slot, owner_fd);
}

absl::StatusOr<TemporaryFolder> TemporaryFolder::MakeInTemp(absl::string_view prefix) {
  std::error_code error;
  const std::filesystem::path temp = std::filesystem::temp_directory_path(error);
  if (!error) return Make(temp, prefix);
  const char* named = std::getenv("TMPDIR");
  return absl::FailedPreconditionError(absl::StrCat("no temporary folder: ", named ? "TMPDIR is '" : "",
                                                    named ? named : "", named ? "', " : "", error.message()));
}

TemporaryFolder::TemporaryFolder(TemporaryFolder&& other) noexcept
    : path_(std::exchange(other.path_, "")),
      slot_(std::exchange(other.slot_, -1)),
      owner_fd_(std::exchange(other.owner_fd_, -1)) {}

TemporaryFolder& TemporaryFolder::operator=(TemporaryFolder&& other) noexcept {
  if (this != &other) {
    Remove();
    path_ = std::exchange(other.path_, "");
    slot_ = std::exchange(other.slot_, -1);
    owner_fd_ = std::exchange(other.owner_fd_, -1);
  }
  return *this;
}

TemporaryFolder::~TemporaryFolder() { Remove(); }

void TemporaryFolder::Remove() {
  if (path_.empty()) return;
  RemoveOwnerLast(path_);
  Unregister(std::exchange(slot_, -1));
  path_.clear();
  if (owner_fd_ >= 0) close(std::exchange(owner_fd_, -1));
}

void RemoveTemporaryFoldersOnSignal() {
  static std::once_flag installed;
  std::call_once(installed, InstallHandlers);
}

}  // namespace taso
