// PartArena: reserved, 2 MiB-aligned mappings committed from the front (part_arena.h).
#include "ssd/part_arena.h"

#include <sys/mman.h>

#include <new>
#include <utility>

#include "strata/common/huge_pages.h"

namespace strata::ssd {

using huge_pages_internal::kPageBytes;
using huge_pages_internal::RoundUp;

PartArena::PartArena(size_t bytes) {
  if (bytes < kHugePageMin) {
    data_ = new uint8_t[bytes];
    bytes_ = bytes;
    return;
  }
  const size_t reserved = RoundUp(2 * bytes, kHugePageMin);
  data_ = static_cast<uint8_t*>(huge_pages_internal::MapAligned(reserved, PROT_NONE));
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
  if (reserved_ == 0 || bytes > reserved_) return false;
  if (bytes <= bytes_) return true;
  const size_t committed = RoundUp(bytes_, kPageBytes), wanted = RoundUp(bytes, kPageBytes);
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
