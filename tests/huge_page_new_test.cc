// Large allocations on transparent huge pages (src/tools/huge_page_new.cc), as linked into
// the tests and tools outside the sanitizers.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <vector>

namespace {

// Whether the kernel gives transparent huge pages to memory that asks (its mode is
// "always" or "madvise", not "never").
bool KernelGivesHugePagesWhenAsked() {
  std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(mode, line);
  return line.find("[always]") != std::string::npos || line.find("[madvise]") != std::string::npos;
}

// The kB of huge pages backing the mapping that holds `address` (/proc/self/smaps), or -1
// where no mapping holds it.
long HugePageKilobytesAt(const void* address) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= at && at < end;
      continue;
    }
    long kilobytes = 0;
    if (inside && std::sscanf(line.c_str(), "AnonHugePages: %ld kB", &kilobytes) == 1) return kilobytes;
  }
  return -1;
}

}  // namespace

#if defined(TASO_HUGE_PAGE_NEW)  // linked outside the sanitizers
TEST_CASE("A large allocation is aligned to a huge page and backed by huge pages once written") {
  constexpr std::size_t kBytes = std::size_t{16} << 20;
  std::unique_ptr<char[]> block(new char[kBytes]);
  CHECK(reinterpret_cast<std::uintptr_t>(block.get()) % (std::size_t{2} << 20) == 0);
  std::memset(block.get(), 1, kBytes);
  if (!KernelGivesHugePagesWhenAsked())
    WARN("this kernel gives no transparent huge pages: not checked");
  else
    CHECK(HugePageKilobytesAt(block.get()) >= 2048);
}
#endif

TEST_CASE("Small allocations and containers work as before") {
  std::vector<std::unique_ptr<int>> many;
  for (int i = 0; i < 1000; ++i) many.push_back(std::make_unique<int>(i));
  long sum = 0;
  for (const auto& p : many) sum += *p;
  CHECK(sum == 999 * 1000 / 2);
  std::vector<float> grown;
  for (int i = 0; i < (1 << 21); ++i) grown.push_back(static_cast<float>(i));  // crosses 2 MiB
  CHECK(grown[(1 << 21) - 1] == static_cast<float>((1 << 21) - 1));
  std::unique_ptr<char[]> none(new (std::nothrow) char[0]);
  CHECK(none != nullptr);
}
