#include "taso/ir/temporary_folder.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace taso {
namespace {

constexpr int kHandledSignals[] = {SIGINT, SIGTERM, SIGHUP};

// The folders alive. Never destroyed: a folder may be removed while static objects are.
struct FolderRegistry {
  std::mutex mutex;
  absl::flat_hash_set<std::string> paths;
};

FolderRegistry& Registry() {
  static FolderRegistry* registry = new FolderRegistry;
  return *registry;
}

// The handler only writes the signal's number to this pipe (write is async-signal-safe);
// a thread reading it does the removing.
int signal_pipe[2] = {-1, -1};

void PassSignalOn(int signal) {
  const int saved_errno = errno;
  const unsigned char number = static_cast<unsigned char>(signal);
  [[maybe_unused]] const ssize_t written = write(signal_pipe[1], &number, 1);
  errno = saved_errno;
}

// Holds the registry to the end, so that no folder is made while they are removed.
[[noreturn]] void RemoveFoldersAndEnd(int signal) {
  FolderRegistry& registry = Registry();
  registry.mutex.lock();
  for (const std::string& path : registry.paths) {
    std::error_code ignored;
    // Twice: a file another thread was writing may appear while the folder is emptied.
    for (int attempt = 0; attempt < 2 && std::filesystem::exists(path, ignored); ++attempt)
      std::filesystem::remove_all(path, ignored);
  }
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigaction(signal, &default_action, nullptr);
  kill(getpid(), signal);
  pause();
  _exit(128 + signal);
}

void WatchSignals() {
  for (;;) {
    unsigned char number = 0;
    const ssize_t n = read(signal_pipe[0], &number, 1);
    if (n == 1) RemoveFoldersAndEnd(number);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
  }
}

// Each folder holds this file, locked by its owner while the folder lives: the kernel
// releases the lock however the owner ends, SIGKILL and the OOM killer included.
constexpr char kOwnerFile[] = ".owner";
// A folder's owner file is locked as soon as it is made; one unlocked for longer than this
// was left by a run that ended.
constexpr auto kOwnerGrace = std::chrono::minutes(1);

// The locked owner file's descriptor, or -1 where the file system refuses it (the folder is
// then never taken for one left behind).
int LockOwnerFile(const std::string& folder) {
  const int fd = open((folder + "/" + kOwnerFile).c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) return fd;
  close(fd);
  return -1;
}

bool LeftByEndedRun(const std::filesystem::path& folder) {
  const std::filesystem::path owner = folder / kOwnerFile;
  std::error_code error;
  const auto written = std::filesystem::last_write_time(owner, error);
  if (error || std::filesystem::file_time_type::clock::now() - written < kOwnerGrace) return false;
  const int fd = open(owner.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool unlocked = flock(fd, LOCK_EX | LOCK_NB) == 0;
  close(fd);
  return unlocked;
}

// Removes the folders `prefix` and six characters names in `parent` that runs ended
// without removing (killed where no handler runs).
void RemoveFoldersOfEndedRuns(const std::filesystem::path& parent, absl::string_view prefix) {
  std::vector<std::filesystem::path> left;
  std::error_code error;
  for (std::filesystem::directory_iterator it(parent, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.size() == prefix.size() + 6 && absl::StartsWith(name, prefix) && LeftByEndedRun(it->path()))
      left.push_back(it->path());
  }
  for (const std::filesystem::path& folder : left) std::filesystem::remove_all(folder, error);
}

void InstallHandlers() {
  if (pipe2(signal_pipe, O_CLOEXEC) != 0) return;  // the signals keep their default action
  fcntl(signal_pipe[1], F_SETFL, O_NONBLOCK);
  std::thread(WatchSignals).detach();
  for (int signal : kHandledSignals) {
    struct sigaction current {};
    if (sigaction(signal, nullptr, &current) != 0 || current.sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_handler = PassSignalOn;
    action.sa_flags = SA_RESTART;  // other threads' calls go on until the process ends
    sigemptyset(&action.sa_mask);
    sigaction(signal, &action, nullptr);
  }
}

}  // namespace

absl::StatusOr<TemporaryFolder> TemporaryFolder::Make(const std::filesystem::path& parent, absl::string_view prefix) {
  RemoveFoldersOfEndedRuns(parent, prefix);
  std::string pattern = (parent / absl::StrCat(prefix, "XXXXXX")).string();
  FolderRegistry& registry = Registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  if (mkdtemp(pattern.data()) == nullptr)
    return absl::PermissionDeniedError(
        absl::StrCat("cannot make a folder in '", parent.string(), "' (", std::strerror(errno), ")"));
  const int owner_fd = LockOwnerFile(pattern);
  registry.paths.insert(pattern);
  return TemporaryFolder(std::move(pattern), owner_fd);
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
    : path_(std::exchange(other.path_, "")), owner_fd_(std::exchange(other.owner_fd_, -1)) {}

TemporaryFolder& TemporaryFolder::operator=(TemporaryFolder&& other) noexcept {
  if (this != &other) {
    Remove();
    path_ = std::exchange(other.path_, "");
    owner_fd_ = std::exchange(other.owner_fd_, -1);
  }
  return *this;
}

TemporaryFolder::~TemporaryFolder() { Remove(); }

void TemporaryFolder::Remove() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
  FolderRegistry& registry = Registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  registry.paths.erase(path_);
  path_.clear();
  if (owner_fd_ >= 0) close(std::exchange(owner_fd_, -1));
}

void RemoveTemporaryFoldersOnSignal() {
  static std::once_flag installed;
  std::call_once(installed, InstallHandlers);
}

void RestoreDefaultSignals() {
  for (int signal : kHandledSignals) {
    struct sigaction current {};
    if (sigaction(signal, nullptr, &current) != 0 || current.sa_handler != PassSignalOn) continue;
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigaction(signal, &default_action, nullptr);
  }
}

}  // namespace taso
