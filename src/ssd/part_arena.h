// PartArena: the memory of one part of the SSD-PS index (compact_index.h), where the
// entries of the part's blocks lie one after another.
//
// From 2 MiB on, an arena is a reservation of twice its size, 2 MiB-aligned and advised
// MADV_HUGEPAGE, of which only the front is committed (readable and writable); Grow commits
// more of it in place, so a part laid out again where it lies asks the kernel only for its
// growth. New pages are zeroed by the kernel first: with a new arena for every layout, that
// zeroing took 14% of the samples of an 8M-key SSD-PS load. Smaller arenas are heap arrays,
// which do not grow (nor are laid out again in place: at 2M keys, where the whole index
// is a few times the CPU's cache, a copy into a new array was faster). bytes() is what is committed: the reservation's untouched rest takes
// no memory.
//
// Thread safety: none; each part's arena is used by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>

namespace strata::ssd {

class PartArena {
 public:
  PartArena() = default;
  explicit PartArena(size_t bytes);  // throws std::bad_alloc when it cannot be had
  PartArena(PartArena&& other) noexcept;
  PartArena& operator=(PartArena&& other) noexcept;
  PartArena(const PartArena&) = delete;
  PartArena& operator=(const PartArena&) = delete;
  ~PartArena();

  uint8_t* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  // Makes the arena `bytes` long or more where it lies; false when it is a heap array or
  // its reservation is too small, and then it is unchanged.
  bool Grow(size_t bytes);

 private:
  void Release();

  uint8_t* data_ = nullptr;
  size_t bytes_ = 0;
  size_t reserved_ = 0;  // 0: a heap array
};

}  // namespace strata::ssd
