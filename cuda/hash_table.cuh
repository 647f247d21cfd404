// GpuHashTable: one device shard of the HBM-PS, an open-addressing (linear probing) table
// from 64-bit keys to fixed-size rows (RowLayout bytes, a multiple of 4) in HBM. Capacity
// is fixed per pass by Reset (max_rows rows, 2x as many slots); a full table is an error
// that names the pass and the sizes, never a silent drop.
//
//   keys     (slots) u64        slot's key, kEmptyKey when free (claimed with atomicCAS)
//   slot_row (slots + 1) u32    row index of the slot (or kNoRow, kNoRoom, kPending); [slots]
//                               is the row of kEmptyKey itself
//   rows     (max_rows, words)  row arena, rows allocated with an atomic counter
//
// The bulk operations take device pointers and a stream. Insert, Resolve and Accumulate
// are asynchronous except where they must read a counter back to report an error (then
// they synchronize the stream, and say so). Row pointers from Resolve stay valid until the
// next Reset. With peer access enabled, a kernel on another GPU may read and write rows
// through a TableView (how CudaHbmPs gathers from peer shards).
//
// Thread safety: externally synchronized; kernels of one bulk call run concurrently over
// distinct keys (atomics), but two calls must not overlap unless both only read.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "device_buffer.cuh"
#include "table_hash.h"

namespace strata::gpu {

inline constexpr uint32_t kNoRow = 0xffffffffu;
// slot_row values besides row indices: a key whose insert found no row left, and a key
// whose row is being taken by another thread of the same insert.
inline constexpr uint32_t kNoRoom = 0xfffffffeu;
inline constexpr uint32_t kPending = 0xfffffffdu;

// What a kernel needs to probe a table; plain data, valid on any GPU with peer access.
struct TableView {
  const uint64_t* keys = nullptr;
  const uint32_t* slot_row = nullptr;
  uint32_t* rows = nullptr;
  uint64_t mask = 0;        // slots - 1 (slots a power of two)
  uint32_t row_words = 0;   // row size in 4-byte words
};

// Resolves keys[i] to its row in views[shard_of[i]] (views[0] when shard_of is null):
// rows_out[i] = the row's first word, or null when absent; *first_missing = the smallest
// i whose key is absent (left unchanged when every key is present; set it to
// kNoRow first). views: device array of num_views views. Asynchronous on stream.
Status ResolveRows(const TableView* views, const uint8_t* shard_of, const uint64_t* keys,
                   size_t n, uint32_t** rows_out, uint32_t* first_missing, cudaStream_t stream);

// out (n, width) words = the first width words of each row (rows: device array of n row
// pointers; a null row, an absent key, gives zeros). Asynchronous on stream.
Status CopyRowsOut(uint32_t* const* rows, size_t n, uint32_t width, uint32_t* out,
                   cudaStream_t stream);

class GpuHashTable {
 public:
  // REQUIRES: row_bytes a positive multiple of 4.
  explicit GpuHashTable(size_t row_bytes) : row_words_(static_cast<uint32_t>(row_bytes / 4)) {}

  // Drops every row and makes room for max_rows rows in pass `pass` (memory grows only).
  // On failure the table is left with room for nothing (every Insert is then an error).
  // Synchronizes stream.
  Status Reset(int pass, size_t max_rows, cudaStream_t stream);

  // Inserts or overwrites the rows of keys (n; device) from rows_in (n, row words; device).
  // A key given more than once gets one row, holding its last occurrence's (as the host
  // backend). ResourceExhausted naming the pass and sizes when the table's max_rows is
  // exceeded; the keys that found no room claim no slot, so the failure costs no more than
  // the insert. Synchronizes stream.
  Status Insert(const uint64_t* keys, size_t n, const uint32_t* rows_in, cudaStream_t stream);

  // Atomically adds deltas (n, width floats; device) into the first width floats of the
  // rows of keys (n; duplicates allowed: every occurrence adds). NotFound naming the first
  // absent key. REQUIRES: width <= row words. Synchronizes stream.
  Status Accumulate(const uint64_t* keys, size_t n, const float* deltas, uint32_t width,
                    cudaStream_t stream);

  // Copies the rows of keys (n; device) into out (n, row words; device). NotFound naming
  // the first absent key. Synchronizes stream.
  Status Export(const uint64_t* keys, size_t n, uint32_t* out, cudaStream_t stream);

  // Rows inserted since Reset. Synchronizes stream.
  Status Size(cudaStream_t stream, size_t* size) const;

  TableView view() const;
  size_t max_rows() const { return max_rows_; }

 private:
  // rows_out_ (n) = the rows of keys; NotFound (after a stream sync) naming the first
  // key absent, with `what` naming the operation.
  Status ResolveOwn(const uint64_t* keys, size_t n, const char* what, cudaStream_t stream);

  uint32_t row_words_;
  int pass_ = 0;
  size_t max_rows_ = 0;
  size_t slots_ = 0;
  DeviceBuffer<uint64_t> keys_;
  DeviceBuffer<uint32_t> slot_row_;
  DeviceBuffer<uint32_t> rows_;
  DeviceBuffer<uint32_t> counters_;  // [0] rows allocated, [1] inserts that found no room
  DeviceBuffer<TableView> self_;     // this table's view, for ResolveRows
  DeviceBuffer<uint32_t> writer_;    // (max_rows) Insert: 1 + the occurrence that writes each row
  DeviceBuffer<uint32_t> row_index_; // per-call scratch: Insert's row of each key
  DeviceBuffer<uint32_t*> rows_out_; // per-call scratch: resolved row pointers
  DeviceBuffer<uint32_t> missing_;   // per-call scratch: first absent index
};

}  // namespace strata::gpu
