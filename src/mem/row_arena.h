// RowArena: fixed-size row slots for one MEM-PS stripe, in chunks that are never moved (a
// slot's address is stable while it is allocated). Chunks hold up to 2 MiB of rows, fewer
// for a small cache; full-size chunks are 2 MiB aligned and advised as huge pages (random
// row reads from DRAM run 2-3x faster without 4 KiB TLB misses). Freed slots are
// reused before a new chunk is taken. Thread safety: none; guarded by the stripe's lock.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

namespace strata::mem_internal {

class RowArena {
 public:
  static constexpr size_t kHugePage = size_t{2} << 20;

  // max_chunk_rows: the most rows a chunk holds (the stripe's capacity suits).
  // REQUIRES: row_bytes >= 1, max_chunk_rows >= 1.
  RowArena(size_t row_bytes, size_t max_chunk_rows)
      : row_bytes_(row_bytes),
        rows_per_chunk_(std::clamp<size_t>(kHugePage / row_bytes, 1, max_chunk_rows)),
        chunk_bytes_(rows_per_chunk_ * row_bytes) {
    assert(row_bytes >= 1 && max_chunk_rows >= 1);
  }

  uint32_t Allocate() {
    if (!free_.empty()) {
      uint32_t slot = free_.back();
      free_.pop_back();
      return slot;
    }
    if (next_ == chunks_.size() * rows_per_chunk_) {
      const bool huge = chunk_bytes_ >= kHugePage / 2;
      const size_t bytes = huge ? (chunk_bytes_ + kHugePage - 1) / kHugePage * kHugePage : chunk_bytes_;
      void* p = huge ? std::aligned_alloc(kHugePage, bytes) : std::malloc(bytes);
      if (p == nullptr) throw std::bad_alloc();
      if (huge) madvise(p, bytes, MADV_HUGEPAGE);  // a hint; failure only costs speed
      chunks_.emplace_back(static_cast<uint8_t*>(p));
    }
    return static_cast<uint32_t>(next_++);
  }

  void Free(uint32_t slot) { free_.push_back(slot); }

  uint8_t* row(uint32_t slot) {
    return chunks_[slot / rows_per_chunk_].get() + (slot % rows_per_chunk_) * row_bytes_;
  }
  const uint8_t* row(uint32_t slot) const {
    return chunks_[slot / rows_per_chunk_].get() + (slot % rows_per_chunk_) * row_bytes_;
  }

  size_t slots() const { return next_; }  // allocated slot indices are < slots()
  size_t memory_bytes() const { return chunks_.size() * chunk_bytes_; }

 private:
  struct FreeDeleter {
    void operator()(uint8_t* p) const { std::free(p); }
  };

  const size_t row_bytes_;
  const size_t rows_per_chunk_;
  const size_t chunk_bytes_;
  size_t next_ = 0;  // slots ever handed out
  std::vector<std::unique_ptr<uint8_t, FreeDeleter>> chunks_;
  std::vector<uint32_t> free_;
};

}  // namespace strata::mem_internal
