// Large allocations on transparent huge pages, for the programs that hold models' tensors
// (linked into taso-opt, taso-run and the tests; not under the sanitizers, which own
// allocation themselves).
//
// Why: reading a model and running it on the reference kernels allocates hundreds of MB of
// fresh memory (the file's bytes, the parsed weights, every intermediate tensor), and the
// kernel faults it in 4 KiB at a time. Where page faults are dear (this project's virtual
// machines: a third of a 346 MB ViT's import was spent in them), 2 MiB pages take the same
// memory in 1/512 of the faults. Debian's kernel gives huge pages only where asked
// (transparent_hugepage=madvise), so the memory is asked for here: every C++ allocation of
// at least kLargeBytes is a mapping of its own, aligned to a huge page and advised
// MADV_HUGEPAGE. Smaller ones, and all frees, are glibc's as before (memory from
// posix_memalign is released by free).
// Where the kernel has no transparent huge pages the advice fails and is ignored: the
// memory is ordinary memory.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TASO_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TASO_UNDER_ASAN 1
#endif

#if !defined(TASO_UNDER_ASAN)

#include <malloc.h>
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace {

constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
// An allocation smaller than a huge page holds no huge page whole.
constexpr std::size_t kLargeBytes = kHugePageBytes;

// Whether glibc gives every allocation of kLargeBytes or more a mapping of its own: its
// threshold fixed there (not grown as it frees), so huge pages are asked only for memory
// that no other allocation will reuse (reused, a partly used huge page would hold memory
// that small allocations freed), and each is returned whole when freed.
bool LargeAllocationsMapped() noexcept {
  static const bool mapped = mallopt(M_MMAP_THRESHOLD, static_cast<int>(kLargeBytes)) == 1;
  return mapped;
}

void* AllocateOnce(std::size_t size) noexcept {
  if (size < kLargeBytes || !LargeAllocationsMapped()) return std::malloc(size == 0 ? 1 : size);
  void* memory = nullptr;
  if (posix_memalign(&memory, kHugePageBytes, size) != 0) return nullptr;
  // The advice covers the allocation's whole huge pages; its tail, if any, stays in small
  // pages (a huge page there would be mostly unused).
  const std::size_t advised = size / kHugePageBytes * kHugePageBytes;
  madvise(memory, advised, MADV_HUGEPAGE);
  return memory;
}

// As the standard's operator new: on failure, the new-handler runs and the allocation is
// tried again; without one, std::bad_alloc.
void* Allocate(std::size_t size) {
  for (;;) {
    if (void* memory = AllocateOnce(size)) return memory;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void* AllocateNoThrow(std::size_t size) noexcept {
  try {
    return Allocate(size);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

}  // namespace

void* operator new(std::size_t size) { return Allocate(size); }
void* operator new[](std::size_t size) { return Allocate(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return AllocateNoThrow(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return AllocateNoThrow(size); }
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete[](void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }
void operator delete[](void* memory, std::size_t) noexcept { std::free(memory); }
void operator delete(void* memory, const std::nothrow_t&) noexcept { std::free(memory); }
void operator delete[](void* memory, const std::nothrow_t&) noexcept { std::free(memory); }

#endif  // !defined(TASO_UNDER_ASAN)
