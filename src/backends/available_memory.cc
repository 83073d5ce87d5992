#include "taso/backends/available_memory.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace taso {

namespace {

// The first number in a file, or nothing (absent, unreadable, "max").
std::optional<int64_t> NumberIn(const std::string& path) {
  std::ifstream in(path);
  int64_t value = 0;
  if (!(in >> value)) return std::nullopt;
  return value;
}

std::optional<int64_t> MemAvailable() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return std::nullopt;
}

// The files of a memory cgroup, and the keys of its file pages in memory.stat.
struct MemoryFiles {
  const char* limit;
  const char* usage;
  const char* active_file;
  const char* inactive_file;
};
constexpr MemoryFiles kV1Files{"memory.limit_in_bytes", "memory.usage_in_bytes", "total_active_file",
                               "total_inactive_file"};
constexpr MemoryFiles kV2Files{"memory.max", "memory.current", "active_file", "inactive_file"};

// A count in a cgroup's memory.stat, or 0.
int64_t StatIn(const std::string& path, absl::string_view key) {
  std::ifstream in(path);
  std::string name;
  int64_t value = 0;
  while (in >> name >> value)
    if (name == key) return value;
  return 0;
}

// What a cgroup's limit leaves: the limit less the usage, where a limit is set (v1 writes
// a huge number for none). The file pages it holds count as free, as the kernel reclaims
// them before it ends a process (as MemAvailable counts them): the model read and those
// written for ONNX Runtime would otherwise count against the limit.
std::optional<int64_t> CgroupLeft(const std::string& dir, const MemoryFiles& files) {
  const std::optional<int64_t> limit = NumberIn(dir + "/" + files.limit), usage = NumberIn(dir + "/" + files.usage);
  if (!limit || !usage || *limit >= (int64_t{1} << 60)) return std::nullopt;
  const std::string stat = dir + "/memory.stat";
  const int64_t file_pages = StatIn(stat, files.active_file) + StatIn(stat, files.inactive_file);
  return std::max<int64_t>(0, *limit - std::max<int64_t>(0, *usage - file_pages));
}

// This process's memory cgroup as /proc/self/cgroup names it, its hierarchy's mount and
// files: v1's memory controller, else v2's unified hierarchy.
struct MemoryCgroup {
  std::string mount, path;
  MemoryFiles files;
};

std::optional<MemoryCgroup> OwnMemoryCgroup() {
  std::ifstream in("/proc/self/cgroup");
  std::optional<MemoryCgroup> unified;
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> fields = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (fields.size() != 3) continue;
    if (fields[1].empty() && fields[0] == "0") unified = MemoryCgroup{"/sys/fs/cgroup", fields[2], kV2Files};
    for (absl::string_view controller : absl::StrSplit(fields[1], ','))
      if (controller == "memory") return MemoryCgroup{"/sys/fs/cgroup/memory", fields[2], kV1Files};
  }
  return unified;
}

}  // namespace

std::optional<int64_t> AvailableMemoryBytes() {
  int64_t given = 0;
  if (const char* env = std::getenv("TASO_AVAILABLE_MEMORY_BYTES"); env != nullptr && absl::SimpleAtoi(env, &given))
    return std::max<int64_t>(0, given);
  std::optional<int64_t> left = MemAvailable();
  const std::optional<MemoryCgroup> cgroup = OwnMemoryCgroup();
  if (!cgroup) return left;
  // Every cgroup above this process's bounds it too.
  for (std::string path = cgroup->path;; path = path.substr(0, path.rfind('/'))) {
    if (const std::optional<int64_t> there = CgroupLeft(cgroup->mount + path, cgroup->files);
        there && (!left || *there < *left))
      left = there;
    if (path.empty() || path == "/" || path.find('/') == std::string::npos) break;
  }
  return left;
}

}  // namespace taso
