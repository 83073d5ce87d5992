// Folders a run makes for its own files (the models a timer runs, an output staged beside
// its destination), removed when the run is done with them and when it is interrupted:
// a taso-opt stopped by Ctrl-C, `timeout` or a job scheduler leaves nothing behind, where
// one run's timer alone could leave gigabytes of weights in $TMPDIR.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace taso {

// A folder this process made and removes, with all it holds, when the object is destroyed
// or the process is ended by a signal RemoveTemporaryFoldersOnSignal handles. Where a run
// was ended by a signal no handler sees (SIGKILL, the OOM killer), the next folder made in
// the same place with the same prefix removes its folders: each holds an owner file its
// process keeps locked (flock), and one unlocked for a minute has no owner.
class TemporaryFolder {
 public:
  // A new folder in `parent`, named `prefix` and six random characters (mkdtemp).
  static absl::StatusOr<TemporaryFolder> Make(const std::filesystem::path& parent, absl::string_view prefix);
  // A new folder in the system's temporary folder ($TMPDIR, else /tmp).
  static absl::StatusOr<TemporaryFolder> MakeInTemp(absl::string_view prefix);

  TemporaryFolder() = default;  // no folder
  TemporaryFolder(TemporaryFolder&& other) noexcept;
  TemporaryFolder& operator=(TemporaryFolder&& other) noexcept;
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  ~TemporaryFolder();

  bool empty() const { return path_.empty(); }
  const std::string& path() const { return path_; }

 private:
  TemporaryFolder(std::string path, int slot, int owner_fd)
      : path_(std::move(path)), slot_(slot), owner_fd_(owner_fd) {}
  void Remove();
  std::string path_;
  int slot_ = -1;      // in the signal handler's table; -1 where it is full
  int owner_fd_ = -1;  // the owner file's, holding its lock; -1 where there is none
};

// A folder a run left behind, removed: its path and the bytes its files held.
struct RemovedFolder {
  std::string path;
  std::uintmax_t bytes = 0;
};

// Removes the folders `prefix` and six characters name in `parent` that runs ended
// without removing (their owner file unlocked for a minute), as TemporaryFolder::Make does
// before it makes one; says which. Folders with no owner file are left alone.
std::vector<RemovedFolder> RemoveFoldersOfEndedRuns(const std::filesystem::path& parent, absl::string_view prefix);

// From the first call on, SIGINT, SIGTERM and SIGHUP remove every TemporaryFolder this
// process made (in the handler, by async-signal-safe calls alone), then end the process by
// the same signal (so its exit status says which). A signal ignored when this is called
// (nohup's SIGHUP, SIGINT in a background job) stays ignored. A child made by fork() has
// the handler too, and leaves its parent's folders alone. The command-line tools call it
// at start.
void RemoveTemporaryFoldersOnSignal();

}  // namespace taso
