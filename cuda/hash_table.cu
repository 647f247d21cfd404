// GpuHashTable kernels: linear probing with atomicCAS on the slot key, rows allocated from
// an atomic counter by the first thread to reach a key's entry, the last occurrence of a key
// electing itself to write its row, and thread-per-word copy/accumulate kernels over
// resolved rows.
#include "hash_table.cuh"

#include <algorithm>
#include <cassert>
#include <string>

namespace strata::gpu {
namespace {

using ull = unsigned long long;

// Row index of key in t, or kNoRow (also for a key whose insert found no room). Probes at
// most every slot once.
__device__ uint32_t FindRow(const TableView& t, uint64_t key) {
  if (key == kEmptyKey) return t.slot_row[t.mask + 1] == kNoRoom ? kNoRow : t.slot_row[t.mask + 1];
  uint64_t s = TableHash(key) & t.mask;
  for (uint64_t probes = 0; probes <= t.mask; ++probes, s = (s + 1) & t.mask) {
    const uint64_t k = t.keys[s];
    if (k == key) return t.slot_row[s] == kNoRoom ? kNoRow : t.slot_row[s];
    if (k == kEmptyKey) return kNoRow;
  }
  return kNoRow;
}

__device__ uint32_t LoadVolatile(const uint32_t* p) { return *const_cast<const volatile uint32_t*>(p); }

// The slot_row entry of key: its slot's, claimed with atomicCAS when the key is new, or the
// special entry of kEmptyKey. Null when the table has no row left to give a new key (then
// no slot is claimed, so failing inserts do not fill the slots) or no free slot.
__device__ uint32_t* ClaimEntry(uint64_t* slot_keys, uint32_t* slot_row, uint64_t mask, uint32_t max_rows,
                                const uint32_t* rows_given, uint64_t key) {
  if (key == kEmptyKey) return &slot_row[mask + 1];
  uint64_t s = TableHash(key) & mask;
  for (uint64_t probes = 0; probes <= mask; ++probes, s = (s + 1) & mask) {
    const uint64_t cur = slot_keys[s];
    if (cur == key) return &slot_row[s];
    if (cur != kEmptyKey) continue;
    if (LoadVolatile(rows_given) >= max_rows) return nullptr;
    const ull prev = atomicCAS(reinterpret_cast<ull*>(&slot_keys[s]), static_cast<ull>(kEmptyKey),
                               static_cast<ull>(key));
    if (prev == kEmptyKey || prev == key) return &slot_row[s];
  }
  return nullptr;
}

// The row of entry: the first thread to see it unset (kNoRow) takes a row from the counter
// (or marks the entry kNoRoom past max_rows) while the others (duplicates of its key in the
// same insert) wait for it, so a key gets one row however often it appears.
__device__ uint32_t RowOfEntry(uint32_t* entry, uint32_t max_rows, uint32_t* rows_given) {
  uint32_t r = LoadVolatile(entry);
  if (r == kNoRow && atomicCAS(entry, kNoRow, kPending) == kNoRow) {
    r = atomicAdd(rows_given, 1u);
    if (r >= max_rows) r = kNoRoom;
    atomicExch(entry, r);
  }
  while ((r = LoadVolatile(entry)) == kPending) {
  }
  return r;
}

// Gives each key its row: row_index[i] is that row, or kNoRow when there was no room
// (counted in counters[1]). counters[0] counts rows given.
__global__ void InsertKernel(uint64_t* slot_keys, uint32_t* slot_row, uint64_t mask, uint32_t max_rows,
                             const uint64_t* keys, size_t n, uint32_t* counters, uint32_t* row_index) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  uint32_t* entry = ClaimEntry(slot_keys, slot_row, mask, max_rows, &counters[0], keys[i]);
  uint32_t r = entry != nullptr ? RowOfEntry(entry, max_rows, &counters[0]) : kNoRoom;
  if (r == kNoRoom) {
    atomicAdd(&counters[1], 1u);
    r = kNoRow;
  }
  row_index[i] = r;
}

// The last occurrence of each row's key in the insert writes the row, as the host backend's
// map keeps the last: writer[r] = 1 + the largest i with row r (cleared first).
__global__ void ClearWritersKernel(const uint32_t* row_index, size_t n, uint32_t* writer) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n && row_index[i] != kNoRow) writer[row_index[i]] = 0;
}

__global__ void ElectLastKernel(const uint32_t* row_index, size_t n, uint32_t* writer) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n && row_index[i] != kNoRow) atomicMax(&writer[row_index[i]], static_cast<uint32_t>(i + 1));
}

__global__ void WriteRowsKernel(const uint32_t* row_index, const uint32_t* writer, size_t n, uint32_t width,
                                const uint32_t* in, uint32_t* rows) {
  const size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (idx >= n * width) return;
  const size_t i = idx / width;
  const uint32_t r = row_index[i];
  if (r != kNoRow && writer[r] == i + 1) rows[static_cast<size_t>(r) * width + idx % width] = in[idx];
}

__global__ void ResolveKernel(const TableView* views, const uint8_t* shard_of, const uint64_t* keys,
                              size_t n, uint32_t** rows_out, uint32_t* first_missing) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const TableView& t = views[shard_of != nullptr ? shard_of[i] : 0];
  const uint32_t r = FindRow(t, keys[i]);
  if (r == kNoRow) {
    rows_out[i] = nullptr;
    atomicMin(first_missing, static_cast<uint32_t>(i));
  } else {
    rows_out[i] = t.rows + static_cast<size_t>(r) * t.row_words;
  }
}

__global__ void CopyOutKernel(uint32_t* const* rows, size_t n, uint32_t width, uint32_t* out) {
  const size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (idx >= n * width) return;
  const uint32_t* row = rows[idx / width];
  out[idx] = row != nullptr ? row[idx % width] : 0u;
}

__global__ void AccumulateKernel(uint32_t* const* rows, size_t n, uint32_t width, const float* deltas) {
  const size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (idx >= n * width) return;
  atomicAdd(reinterpret_cast<float*>(rows[idx / width]) + idx % width, deltas[idx]);
}

}  // namespace

Status ResolveRows(const TableView* views, const uint8_t* shard_of, const uint64_t* keys, size_t n,
                   uint32_t** rows_out, uint32_t* first_missing, cudaStream_t stream) {
  assert(n < kNoRow);
  if (n == 0) return Status::OK();
  ResolveKernel<<<GridFor(n), kBlock, 0, stream>>>(views, shard_of, keys, n, rows_out, first_missing);
  STRATA_CUDA_LAUNCHED();
  return Status::OK();
}

Status CopyRowsOut(uint32_t* const* rows, size_t n, uint32_t width, uint32_t* out, cudaStream_t stream) {
  if (n == 0 || width == 0) return Status::OK();
  CopyOutKernel<<<GridFor(n * width), kBlock, 0, stream>>>(rows, n, width, out);
  STRATA_CUDA_LAUNCHED();
  return Status::OK();
}

Status GpuHashTable::Reset(int pass, size_t max_rows, cudaStream_t stream) {
  if (max_rows >= kPending) {
    return Status::ResourceExhausted("HBM-PS device table for pass " + std::to_string(pass) + ": " +
                                     std::to_string(max_rows) + " rows on one device, past the table's limit of " +
                                     std::to_string(kPending - 1) + "; use more workers");
  }
  size_t slots = 64;
  while (slots < 2 * max_rows) slots <<= 1;
  // The sizes change only once every buffer has its room: a failed allocation leaves the
  // table empty (max_rows 0), never sized past its buffers.
  max_rows_ = 0;
  slots_ = 0;
  STRATA_RETURN_IF_ERROR(keys_.ReserveExact(slots));
  STRATA_RETURN_IF_ERROR(slot_row_.ReserveExact(slots + 1));
  STRATA_RETURN_IF_ERROR(rows_.ReserveExact(max_rows * row_words_));
  STRATA_RETURN_IF_ERROR(writer_.ReserveExact(max_rows));
  STRATA_RETURN_IF_ERROR(counters_.Reserve(2));
  STRATA_RETURN_IF_ERROR(missing_.Reserve(1));
  pass_ = pass;
  max_rows_ = max_rows;
  slots_ = slots;
  STRATA_CUDA_TRY(cudaMemsetAsync(keys_.get(), 0xff, slots * sizeof(uint64_t), stream));
  STRATA_CUDA_TRY(cudaMemsetAsync(slot_row_.get(), 0xff, (slots + 1) * sizeof(uint32_t), stream));
  STRATA_CUDA_TRY(cudaMemsetAsync(counters_.get(), 0, 2 * sizeof(uint32_t), stream));
  const TableView v = view();
  STRATA_RETURN_IF_ERROR(Upload(&v, 1, stream, &self_));
  STRATA_CUDA_TRY(cudaStreamSynchronize(stream));
  return Status::OK();
}

TableView GpuHashTable::view() const {
  TableView v;
  v.keys = keys_.get();
  v.slot_row = slot_row_.get();
  v.rows = rows_.get();
  v.mask = slots_ - 1;
  v.row_words = row_words_;
  return v;
}

Status GpuHashTable::Insert(const uint64_t* keys, size_t n, const uint32_t* rows_in, cudaStream_t stream) {
  if (n == 0) return Status::OK();
  if (slots_ == 0) return Status::InvalidArgument("HBM-PS device table: an insert before its pass was set up");
  assert(n < kNoRow);
  STRATA_RETURN_IF_ERROR(row_index_.Reserve(n));
  InsertKernel<<<GridFor(n), kBlock, 0, stream>>>(keys_.get(), slot_row_.get(), slots_ - 1,
                                                  static_cast<uint32_t>(max_rows_), keys, n, counters_.get(),
                                                  row_index_.get());
  STRATA_CUDA_LAUNCHED();
  ClearWritersKernel<<<GridFor(n), kBlock, 0, stream>>>(row_index_.get(), n, writer_.get());
  STRATA_CUDA_LAUNCHED();
  ElectLastKernel<<<GridFor(n), kBlock, 0, stream>>>(row_index_.get(), n, writer_.get());
  STRATA_CUDA_LAUNCHED();
  WriteRowsKernel<<<GridFor(n * row_words_), kBlock, 0, stream>>>(row_index_.get(), writer_.get(), n, row_words_,
                                                                  rows_in, rows_.get());
  STRATA_CUDA_LAUNCHED();
  uint32_t counters[2];
  STRATA_RETURN_IF_ERROR(Download(counters_.get(), 2, stream, counters));
  STRATA_CUDA_TRY(cudaStreamSynchronize(stream));
  if (counters[1] != 0) {
    return Status::ResourceExhausted(
        "HBM-PS device table full in pass " + std::to_string(pass_) + ": room for " +
        std::to_string(max_rows_) + " rows (planned from the pass's working set), " +
        std::to_string(counters[1]) + " of " + std::to_string(n) + " keys of this insert found no room");
  }
  return Status::OK();
}

Status GpuHashTable::ResolveOwn(const uint64_t* keys, size_t n, const char* what, cudaStream_t stream) {
  STRATA_RETURN_IF_ERROR(rows_out_.Reserve(n));
  STRATA_CUDA_TRY(cudaMemsetAsync(missing_.get(), 0xff, sizeof(uint32_t), stream));
  STRATA_RETURN_IF_ERROR(ResolveRows(self_.get(), nullptr, keys, n, rows_out_.get(), missing_.get(), stream));
  uint32_t missing = kNoRow;
  STRATA_RETURN_IF_ERROR(Download(missing_.get(), 1, stream, &missing));
  STRATA_CUDA_TRY(cudaStreamSynchronize(stream));
  if (missing == kNoRow) return Status::OK();
  uint64_t key = 0;
  STRATA_CUDA_TRY(cudaMemcpy(&key, keys + missing, sizeof(key), cudaMemcpyDeviceToHost));
  return Status::NotFound(std::string(what) + ": key " + std::to_string(key) + " not in the HBM-PS (pass " +
                          std::to_string(pass_) + ")");
}

Status GpuHashTable::Accumulate(const uint64_t* keys, size_t n, const float* deltas, uint32_t width,
                                cudaStream_t stream) {
  assert(width <= row_words_);
  if (n == 0) return Status::OK();
  STRATA_RETURN_IF_ERROR(ResolveOwn(keys, n, "Accumulate", stream));
  AccumulateKernel<<<GridFor(n * width), kBlock, 0, stream>>>(rows_out_.get(), n, width, deltas);
  STRATA_CUDA_LAUNCHED();
  STRATA_CUDA_TRY(cudaStreamSynchronize(stream));
  return Status::OK();
}

Status GpuHashTable::Export(const uint64_t* keys, size_t n, uint32_t* out, cudaStream_t stream) {
  if (n == 0) return Status::OK();
  STRATA_RETURN_IF_ERROR(ResolveOwn(keys, n, "Export", stream));
  STRATA_RETURN_IF_ERROR(CopyRowsOut(rows_out_.get(), n, row_words_, out, stream));
  STRATA_CUDA_TRY(cudaStreamSynchronize(stream));
  return Status::OK();
}

Status GpuHashTable::Size(cudaStream_t stream, size_t* size) const {
  uint32_t allocated = 0;
  STRATA_RETURN_IF_ERROR(Download(counters_.get(), 1, stream, &allocated));
  STRATA_CUDA_TRY(cudaStreamSynchronize(stream));
  *size = std::min<size_t>(allocated, max_rows_);
  return Status::OK();
}

}  // namespace strata::gpu
