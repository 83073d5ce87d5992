#include "taso/ir/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace taso {

namespace {

absl::Status CannotMap(const std::filesystem::path& path, int error) {
  return absl::UnavailableError(absl::StrCat("cannot map '", path.string(), "': ", std::strerror(error)));
}

// The live mappings by device and inode, so that the many tensors of one data file (and
// the same model imported again at other sizes) share one mapping.
struct OpenFiles {
  absl::Mutex mutex;
  absl::flat_hash_map<std::pair<uint64_t, uint64_t>, std::weak_ptr<const MappedFile>> by_inode ABSL_GUARDED_BY(mutex);
};

OpenFiles& TheOpenFiles() {
  static auto* files = new OpenFiles;  // never destroyed: mappings may outlive static destruction
  return *files;
}

// A file descriptor closed when it goes out of scope.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

absl::StatusOr<MappedFile::Identity> MappedFile::IdentityOf(int fd, const std::filesystem::path& path) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return CannotMap(path, errno);
  if (!S_ISREG(st.st_mode)) return absl::InvalidArgumentError(absl::StrCat("'", path.string(), "' is not a file"));
  if (st.st_size == 0) return absl::InvalidArgumentError(absl::StrCat("'", path.string(), "' is empty"));
  return Identity{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), static_cast<int64_t>(st.st_size),
                  static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

absl::StatusOr<std::shared_ptr<const MappedFile>> MappedFile::Open(const std::filesystem::path& path) {
  const Descriptor file{open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) return CannotMap(path, errno);
  absl::StatusOr<Identity> identity = IdentityOf(file.fd, path);
  if (!identity.ok()) return identity.status();
  OpenFiles& open_files = TheOpenFiles();
  absl::MutexLock lock(&open_files.mutex);
  std::weak_ptr<const MappedFile>& entry = open_files.by_inode[{identity->device, identity->inode}];
  if (std::shared_ptr<const MappedFile> mapped = entry.lock(); mapped && mapped->identity_ == *identity) return mapped;
  const auto size = static_cast<size_t>(identity->size);
  void* base = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd, 0);
  if (base == MAP_FAILED) return CannotMap(path, errno);
  std::shared_ptr<const MappedFile> mapped(new MappedFile(base, size, *identity));
  entry = mapped;
  return mapped;
}

MappedFile::~MappedFile() { munmap(base_, size_); }

bool MappedFile::IsFile(const std::filesystem::path& path) const {
  const Descriptor file{open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) return false;
  const absl::StatusOr<Identity> identity = IdentityOf(file.fd, path);
  return identity.ok() && *identity == identity_;
}

}  // namespace taso
