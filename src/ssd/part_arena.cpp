// PartArena: reserved, 2 MiB-aligned mappings committed from the front (part_arena.h).
#include "ssd/part_arena.h"

#include <sys/mman.h>

#include <new>
#include <utility>

#include "strata/common/huge_pages.h"

namespace strata::ssd {
namespace {

constexpr size_t kPage = 4096;
size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

// A PROT_NONE reservation of `length` bytes starting on a 2 MiB boundary, or nullptr.
uint8_t* Reserve(size_t length) {
  const size_t padded = length + kHugePageMin;
  void* raw = mmap(nullptr, padded, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto base = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t start = RoundUp(base, kHugePageMin);
  if (start > base) munmap(raw, start - base);
  if (base + padded > start + length) munmap(reinterpret_cast<void*>(start + length), base + padded - start - length);
  madvise(reinterpret_cast<void*>(start), length, MADV_HUGEPAGE);  // a hint; failure only costs speed
  return reinterpret_cast<uint8_t*>(start);
}

}  // namespace

PartArena::PartArena(size_t bytes) {
  if (bytes < kHugePageMin) {
    data_ = new uint8_t[bytes];
    bytes_ = bytes;
    return;
  }
  const size_t reserved = RoundUp(2 * bytes, kHugePageMin);
  data_ = Reserve(reserved);
  if (data_ == nullptr) throw std::bad_alloc();
  reserved_ = reserved;
  if (!Grow(bytes)) {
    Release();
    throw std::bad_alloc();
  }
}

PartArena::PartArena(PartArena&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      reserved_(std::exchange(other.reserved_, 0)) {}

PartArena& PartArena::operator=(PartArena&& other) noexcept {
  if (this != &other) {
    Release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    reserved_ = std::exchange(other.reserved_, 0);
  }
  return *this;
}

PartArena::~PartArena() { Release(); }

bool PartArena::Grow(size_t bytes) {
  if (bytes <= bytes_) return true;
  if (bytes > reserved_) return false;
  const size_t committed = RoundUp(bytes_, kPage), wanted = RoundUp(bytes, kPage);
  if (wanted > committed && mprotect(data_ + committed, wanted - committed, PROT_READ | PROT_WRITE) != 0) return false;
  bytes_ = bytes;
  return true;
}

void PartArena::Release() {
  if (reserved_ > 0) {
    munmap(data_, reserved_);
  } else {
    delete[] data_;
  }
  data_ = nullptr;
  bytes_ = reserved_ = 0;
}

}  // namespace strata::ssd
