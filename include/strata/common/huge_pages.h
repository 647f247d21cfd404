// HugePageAllocator: a standard allocator for the large arrays that are read at random
// (hash-index slots, Bloom filter blocks, a cache's per-row entries, a pass's row table).
// An allocation of at least 2 MiB is mapped on its own, 2 MiB aligned, and advised as
// transparent huge pages: a random read over hundreds of MB then costs one cache miss, not
// a 4 KiB TLB miss and a page walk besides. Smaller ones come from operator new. Pages are
// only backed once written, as with malloc, and go back to the system when deallocated.
// HugeVector<T> is a std::vector that allocates this way. AdviseHugePages advises memory
// allocated elsewhere (large byte buffers) the same way.
// Thread safety: stateless; safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace strata {

namespace huge_pages_internal {
inline constexpr size_t kPageBytes = 4096;
// n rounded up to a multiple of `to`.
constexpr size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }
// bytes >= kHugePageMin: a 2 MiB-aligned anonymous mapping advised MADV_HUGEPAGE.
void* Map(size_t bytes);
void Unmap(void* p, size_t bytes);
// The same of `length` bytes (a multiple of 4 KiB) with protection `prot` (mmap's), or
// nullptr when it cannot be had; with PROT_NONE it only reserves the addresses.
void* MapAligned(size_t length, int prot);
}  // namespace huge_pages_internal

inline constexpr size_t kHugePageMin = size_t{2} << 20;

// Advises the whole 2 MiB pages inside [p, p + bytes) as transparent huge pages, for memory
// not mapped here (a std::string's, posix_memalign's) that is written once it is made: its
// pages not yet backed are then backed 2 MiB at a time. A hint; its failure costs only speed.
void AdviseHugePages(void* p, size_t bytes);

template <typename T>
struct HugePageAllocator {
  using value_type = T;

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT: converting, as allocators are

  T* allocate(size_t n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_array_new_length();
    const size_t bytes = n * sizeof(T);
    if (bytes < kHugePageMin) return static_cast<T*>(::operator new(bytes, std::align_val_t{alignof(T)}));
    return static_cast<T*>(huge_pages_internal::Map(bytes));
  }
  void deallocate(T* p, size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHugePageMin) {
      ::operator delete(p, std::align_val_t{alignof(T)});
    } else {
      huge_pages_internal::Unmap(p, bytes);
    }
  }

  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const HugePageAllocator<U>&) const { return false; }
};

template <typename T>
using HugeVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace strata
