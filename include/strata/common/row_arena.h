// RowArena: fixed-size row slots numbered 0, 1, 2, ... (a MEM-PS stripe's cache-policy
// handles, a memory store's row ids), in chunks of up to 2 MiB of rows. Full-size chunks
// come from HugePageAllocator (strata/common/huge_pages.h): 2 MiB aligned and advised as
// huge pages (random row reads from DRAM run 2-3x faster without 4 KiB TLB misses); they
// never move. The first chunk starts small and doubles (a
// copy) until it is full-size, so a small store takes little memory; a row's address is
// stable until the next Grow. The owner numbers and reuses slots; the arena only grows.
// Thread safety: none; guarded by the owner's lock.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "strata/common/huge_pages.h"

namespace strata {

class RowArena {
 public:
  static constexpr size_t kHugePage = kHugePageMin;
  static constexpr size_t kFirstChunkRows = 64;

  // max_chunk_rows: the most rows a chunk holds (a cache's capacity suits).
  // REQUIRES: row_bytes >= 1, max_chunk_rows >= 1.
  RowArena(size_t row_bytes, size_t max_chunk_rows)
      : row_bytes_(row_bytes), rows_per_chunk_(RowsPerChunk(row_bytes, max_chunk_rows)) {
    assert(row_bytes >= 1 && max_chunk_rows >= 1);
  }

  // The rows a full chunk holds.
  static size_t RowsPerChunk(size_t row_bytes, size_t max_chunk_rows) {
    return std::clamp<size_t>(kHugePage / row_bytes, 1, std::max<size_t>(max_chunk_rows, 1));
  }

  // Makes slots [0, n) addressable.
  void Grow(size_t n) {
    if (n <= capacity_rows_) return;
    if (capacity_rows_ < rows_per_chunk_) {  // the first chunk, not full-size yet
      const size_t rows = std::min(rows_per_chunk_, std::max({n, 2 * capacity_rows_, kFirstChunkRows}));
      Chunk first = NewChunk(rows);
      if (!chunks_.empty()) std::memcpy(first.get(), chunks_[0].get(), capacity_rows_ * row_bytes_);
      chunks_.clear();
      chunks_.push_back(std::move(first));
      allocated_bytes_ = AllocationBytes(rows);
      capacity_rows_ = rows;
    }
    while (capacity_rows_ < n) {
      chunks_.push_back(NewChunk(rows_per_chunk_));
      allocated_bytes_ += AllocationBytes(rows_per_chunk_);
      capacity_rows_ += rows_per_chunk_;
    }
  }

  uint8_t* row(uint32_t slot) {
    return chunks_[slot / rows_per_chunk_].get() + (slot % rows_per_chunk_) * row_bytes_;
  }
  const uint8_t* row(uint32_t slot) const {
    return chunks_[slot / rows_per_chunk_].get() + (slot % rows_per_chunk_) * row_bytes_;
  }

  size_t memory_bytes() const { return allocated_bytes_; }

 private:
  struct ChunkDeleter {
    size_t bytes;
    void operator()(uint8_t* p) const { HugePageAllocator<uint8_t>().deallocate(p, bytes); }
  };
  using Chunk = std::unique_ptr<uint8_t, ChunkDeleter>;

  static bool Huge(size_t bytes) { return bytes >= kHugePage / 2; }
  size_t AllocationBytes(size_t rows) const {
    const size_t bytes = rows * row_bytes_;
    return Huge(bytes) ? (bytes + kHugePage - 1) / kHugePage * kHugePage : bytes;
  }

  // A chunk of half a huge page or more is rounded up to whole ones (AllocationBytes), so
  // the allocator maps it on huge pages.
  Chunk NewChunk(size_t rows) const {
    const size_t bytes = AllocationBytes(rows);
    return Chunk(HugePageAllocator<uint8_t>().allocate(bytes), ChunkDeleter{bytes});
  }

  const size_t row_bytes_;
  const size_t rows_per_chunk_;
  size_t capacity_rows_ = 0;
  size_t allocated_bytes_ = 0;
  std::vector<Chunk> chunks_;
};

}  // namespace strata
