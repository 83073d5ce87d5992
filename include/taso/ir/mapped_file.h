// Files mapped read-only into memory, so that a model's weights stored as external data
// are read in place: their bytes are the page cache's, neither copied nor zeroed, and
// held by no private memory of ours (reading a 2.9 GB decoder's weights into vectors was
// most of its import, the kernel clearing fresh pages and copying from the page cache).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace taso {

// A whole regular file mapped read-only, unmapped with its last holder. A file another
// process truncates while it is mapped faults when its lost pages are read, as it does
// for ONNX Runtime, which maps such files too: models are not rewritten while read.
class MappedFile {
 public:
  // The file at `path`, mapped once while any holder of it lives: a file opened again
  // (the same device and inode, size and modification time) gives the same mapping. An
  // empty file, or one that cannot be mapped, is an error.
  static absl::StatusOr<std::shared_ptr<const MappedFile>> Open(const std::filesystem::path& path);

  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  // The file's bytes; the first byte is page-aligned.
  absl::Span<const char> bytes() const { return {static_cast<const char*>(base_), size_}; }
  // Whether `path` names this file as it was mapped (its device and inode, size and
  // modification time).
  bool IsFile(const std::filesystem::path& path) const;

 private:
  struct Identity {
    uint64_t device = 0, inode = 0;
    int64_t size = 0, modified_ns = 0;
    bool operator==(const Identity&) const = default;
  };
  MappedFile(void* base, size_t size, Identity identity) : base_(base), size_(size), identity_(identity) {}
  static absl::StatusOr<Identity> IdentityOf(int fd, const std::filesystem::path& path);

  void* base_;
  size_t size_;
  Identity identity_;
};

}  // namespace taso
