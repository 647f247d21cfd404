// DeviceBatchIndex: one stable radix sort of (key, position) pairs and two prefix sums.
// Runs of equal keys in the sorted order are the distinct keys; a key's first-seen rank is
// the exclusive sum of "first occurrence" flags laid out by batch position.
#include "batch_index.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cassert>

namespace strata::gpu {
namespace {

// Per CSR segment (example i, slot s): each occurrence's position and input block offset.
__global__ void PositionsKernel(const uint32_t* offsets, int B, int S, int dim, int input_width,
                                uint32_t* pos, uint32_t* base) {
  const size_t seg = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (seg >= static_cast<size_t>(B) * S) return;
  const uint32_t block = static_cast<uint32_t>((seg / S) * input_width + (seg % S) * dim);
  for (uint32_t j = offsets[seg]; j < offsets[seg + 1]; ++j) {
    pos[j] = j;
    base[j] = block;
  }
}

__global__ void HeadsKernel(const uint64_t* sorted_keys, const uint32_t* sorted_pos, size_t n,
                            uint32_t* heads, uint32_t* first) {
  const size_t t = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (t >= n) return;
  const bool head = t == 0 || sorted_keys[t] != sorted_keys[t - 1];
  heads[t] = head ? 1u : 0u;
  if (head) first[sorted_pos[t]] = 1u;
}

__global__ void RunHeadsKernel(const uint32_t* heads, const uint32_t* run, size_t n, uint32_t* run_head) {
  const size_t t = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (t < n && heads[t]) run_head[run[t] - 1] = static_cast<uint32_t>(t);
}

struct AssignArgs {
  const uint64_t* sorted_keys;
  const uint32_t* sorted_pos;
  const uint32_t* run;
  const uint32_t* run_head;
  const uint32_t* rank;
  const uint32_t* base;
  const uint8_t* occ_shard;
  size_t n;
  uint64_t* keys;
  uint32_t* counts;
  uint32_t* local;
  uint32_t* key_start;
  uint32_t* occ_base;
  uint8_t* shards;
};

__global__ void AssignKernel(AssignArgs a) {
  const size_t t = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (t >= a.n) return;
  const uint32_t r = a.run[t] - 1;
  const uint32_t head = a.run_head[r];
  const uint32_t p = a.sorted_pos[t];
  const uint32_t lid = a.rank[a.sorted_pos[head]];
  a.local[p] = lid;
  a.occ_base[t] = a.base[p];
  if (t != head) return;
  const uint32_t runs = a.run[a.n - 1];
  const uint32_t next = r + 1 < runs ? a.run_head[r + 1] : static_cast<uint32_t>(a.n);
  a.keys[lid] = a.sorted_keys[t];
  a.counts[lid] = next - head;
  a.key_start[lid] = head;
  if (a.occ_shard != nullptr) a.shards[lid] = a.occ_shard[p];
}

}  // namespace

Status DeviceBatchIndex::Reserve(size_t n) {
  if (n <= capacity_) return Status::OK();
  for (DeviceBuffer<uint32_t>* b : {&pos_, &sorted_pos_, &base_, &heads_, &run_, &first_, &rank_, &run_head_,
                                    &counts_, &local_, &key_start_, &occ_base_}) {
    STRATA_RETURN_IF_ERROR(b->Reserve(n));
  }
  STRATA_RETURN_IF_ERROR(sorted_keys_.Reserve(n));
  STRATA_RETURN_IF_ERROR(keys_.Reserve(n));
  STRATA_RETURN_IF_ERROR(shards_.Reserve(n));
  capacity_ = n;
  return Status::OK();
}

Status DeviceBatchIndex::Build(const uint64_t* keys, size_t n, const uint32_t* offsets, int B, int S, int dim,
                               int input_width, const uint8_t* occ_shard, cudaStream_t stream) {
  assert(n < 0xffffffffu);
  n_ = n;
  k_ = 0;
  if (n == 0) return Status::OK();
  STRATA_RETURN_IF_ERROR(Reserve(n));
  const int items = static_cast<int>(n);
  size_t sort_bytes = 0, inclusive_bytes = 0, exclusive_bytes = 0;
  STRATA_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, keys, sorted_keys_.get(), pos_.get(),
                                                  sorted_pos_.get(), items, 0, 64, stream));
  STRATA_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, inclusive_bytes, heads_.get(), run_.get(), items, stream));
  STRATA_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, exclusive_bytes, first_.get(), rank_.get(), items, stream));
  size_t temp_bytes = std::max({sort_bytes, inclusive_bytes, exclusive_bytes});
  STRATA_RETURN_IF_ERROR(temp_.Reserve(temp_bytes));
  temp_bytes = temp_.capacity();

  const size_t segments = static_cast<size_t>(B) * S;
  if (segments > 0) {
    PositionsKernel<<<GridFor(segments), kBlock, 0, stream>>>(offsets, B, S, dim, input_width, pos_.get(),
                                                              base_.get());
    STRATA_CUDA_LAUNCHED();
  }
  STRATA_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp_.get(), temp_bytes, keys, sorted_keys_.get(), pos_.get(),
                                                  sorted_pos_.get(), items, 0, 64, stream));
  STRATA_CUDA_TRY(cudaMemsetAsync(first_.get(), 0, n * sizeof(uint32_t), stream));
  HeadsKernel<<<GridFor(n), kBlock, 0, stream>>>(sorted_keys_.get(), sorted_pos_.get(), n, heads_.get(),
                                                 first_.get());
  STRATA_CUDA_LAUNCHED();
  temp_bytes = temp_.capacity();
  STRATA_CUDA_TRY(cub::DeviceScan::InclusiveSum(temp_.get(), temp_bytes, heads_.get(), run_.get(), items, stream));
  temp_bytes = temp_.capacity();
  STRATA_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp_.get(), temp_bytes, first_.get(), rank_.get(), items, stream));
  RunHeadsKernel<<<GridFor(n), kBlock, 0, stream>>>(heads_.get(), run_.get(), n, run_head_.get());
  STRATA_CUDA_LAUNCHED();
  AssignArgs a{sorted_keys_.get(), sorted_pos_.get(), run_.get(), run_head_.get(), rank_.get(), base_.get(),
               occ_shard, n, keys_.get(), counts_.get(), local_.get(), key_start_.get(), occ_base_.get(),
               shards_.get()};
  AssignKernel<<<GridFor(n), kBlock, 0, stream>>>(a);
  STRATA_CUDA_LAUNCHED();
  uint32_t runs = 0;
  STRATA_RETURN_IF_ERROR(Download(run_.get() + (n - 1), 1, stream, &runs));
  STRATA_CUDA_TRY(cudaStreamSynchronize(stream));
  k_ = runs;
  return Status::OK();
}

}  // namespace strata::gpu
