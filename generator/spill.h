// Where taso-gen's data goes when it does not fit in memory (issue 46): a folder of its
// own (a TemporaryFolder), made on first use and removed at the end, also when the run is
// interrupted; folders left by a run that was killed outright are removed by the next
// run. And fixed-size records kept in memory up to a budget, the older ones on disk past
// it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "taso/ir/temporary_folder.h"

namespace taso::gen {

// A folder named taso-gen-XXXXXX under `parent` ($TMPDIR or /tmp where empty), made on the
// first Path(); removed as a TemporaryFolder is (RemoveTemporaryFoldersOnSignal, which
// taso-gen's cli::Init calls, covers interruptions).
class SpillFolder {
 public:
  explicit SpillFolder(std::string parent);
  SpillFolder(const SpillFolder&) = delete;
  SpillFolder& operator=(const SpillFolder&) = delete;

  absl::StatusOr<std::string> Path();  // makes the folder on first use
  bool made() const;

 private:
  std::string parent_;
  mutable absl::Mutex mu_;
  TemporaryFolder folder_;
};

// Removes the spill folders under `parent` that runs killed outright left
// (RemoveFoldersOfEndedRuns); returns a line for each.
std::vector<std::string> RemoveStaleSpillFolders(const std::string& parent);

// The default parent folder: $TMPDIR, else /tmp.
std::string DefaultSpillParent();

// Fixed-size records appended in order and read back by index: the last ones in memory up
// to `memory_bytes`, the others in a file of `folder`. Reads may run on several threads
// at once, but not alongside an append.
template <typename T>
class RecordFile {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  RecordFile(SpillFolder* folder, std::string name, uint64_t memory_bytes)
      : folder_(folder), name_(std::move(name)), memory_records_(std::max<uint64_t>(1, memory_bytes / sizeof(T))) {}
  ~RecordFile() { CloseFile(); }
  RecordFile(const RecordFile&) = delete;
  RecordFile& operator=(const RecordFile&) = delete;

  absl::Status Append(const T& record) {
    tail_.push_back(record);
    if (tail_.size() >= memory_records_) return Flush();
    return absl::OkStatus();
  }
  size_t size() const { return on_disk_ + tail_.size(); }
  uint64_t disk_bytes() const { return on_disk_ * sizeof(T); }

  // Records [lo, lo + n) into out[0..n).
  absl::Status Read(size_t lo, size_t n, T* out) const {
    size_t from_disk = lo < on_disk_ ? std::min(n, on_disk_ - lo) : 0;
    if (from_disk > 0) {
      absl::Status s = ReadFile(lo * sizeof(T), from_disk * sizeof(T), reinterpret_cast<char*>(out));
      if (!s.ok()) return s;
    }
    for (size_t i = from_disk; i < n; ++i) out[i] = tail_[lo + i - on_disk_];
    return absl::OkStatus();
  }

 private:
  absl::Status Flush();  // the records in memory to the file
  absl::Status ReadFile(uint64_t offset, uint64_t bytes, char* out) const;
  void CloseFile();

  SpillFolder* folder_;
  std::string name_;
  size_t memory_records_;
  int fd_ = -1;
  size_t on_disk_ = 0;
  std::vector<T> tail_;
};

// The untyped file operations of RecordFile.
absl::Status AppendToFile(SpillFolder* folder, const std::string& name, int* fd, const char* bytes, uint64_t n);
absl::Status ReadAt(int fd, const std::string& name, uint64_t offset, uint64_t bytes, char* out);
void CloseFd(int* fd);

template <typename T>
absl::Status RecordFile<T>::Flush() {
  absl::Status s =
      AppendToFile(folder_, name_, &fd_, reinterpret_cast<const char*>(tail_.data()), tail_.size() * sizeof(T));
  if (!s.ok()) return s;
  on_disk_ += tail_.size();
  std::vector<T>().swap(tail_);
  return absl::OkStatus();
}

template <typename T>
absl::Status RecordFile<T>::ReadFile(uint64_t offset, uint64_t bytes, char* out) const {
  return ReadAt(fd_, name_, offset, bytes, out);
}

template <typename T>
void RecordFile<T>::CloseFile() {
  CloseFd(&fd_);
}

}  // namespace taso::gen
