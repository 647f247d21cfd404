// HugePageAllocator's mappings (strata/common/huge_pages.h).
#include "strata/common/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace strata::huge_pages_internal {

// Maps 2 MiB more than asked and unmaps what lies before the first 2 MiB boundary and
// after the allocation, so the array starts on a huge page.
void* MapAligned(size_t length, int prot) {
  const size_t padded = length + kHugePageMin;
  const int flags = MAP_PRIVATE | MAP_ANONYMOUS | (prot == PROT_NONE ? MAP_NORESERVE : 0);
  void* raw = mmap(nullptr, padded, prot, flags, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto base = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t start = RoundUp(base, kHugePageMin);
  if (start > base) munmap(raw, start - base);
  if (base + padded > start + length) munmap(reinterpret_cast<void*>(start + length), base + padded - start - length);
  madvise(reinterpret_cast<void*>(start), length, MADV_HUGEPAGE);  // a hint; failure only costs speed
  return reinterpret_cast<void*>(start);
}

void* Map(size_t bytes) {
  void* p = MapAligned(RoundUp(bytes, kPageBytes), PROT_READ | PROT_WRITE);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void Unmap(void* p, size_t bytes) { munmap(p, RoundUp(bytes, kPageBytes)); }

}  // namespace strata::huge_pages_internal

namespace strata {

void AdviseHugePages(void* p, size_t bytes) {
  const auto begin = huge_pages_internal::RoundUp(reinterpret_cast<uintptr_t>(p), kHugePageMin);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) / kHugePageMin * kHugePageMin;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

}  // namespace strata
