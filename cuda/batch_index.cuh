// DeviceBatchIndex: the prebuilt gather index of one mini-batch, built on the device with
// CUB (radix sort of the key occurrences, then scans), the GPU twin of src/hbm/batch_index:
//  - the distinct keys in first-seen order, their occurrence counts, and each occurrence's
//    local id (the position of its key in that list), as the host backend reports them;
//  - each distinct key's occurrences in ascending batch position (a stable sort keeps equal
//    keys in position order), with the offset of the occurrence's (example, slot) block in
//    the MLP input, so the sparse-gradient scatter sums duplicates in the host's order
//    without atomics.
// All arrays live on the device and stay valid until the next Build. One index per worker;
// not thread-safe.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "device_buffer.cuh"

namespace strata::gpu {

class DeviceBatchIndex {
 public:
  // keys: (n) occurrences, example-major then slot-major (device); offsets: (B*S + 1) CSR
  // offsets of Batch (device); occ_shard: (n) device shard of each occurrence (device), or
  // null when the rank has one shard. The input block of example i, slot s starts at
  // i * input_width + s * dim. Synchronizes stream (to learn the distinct count).
  Status Build(const uint64_t* keys, size_t n, const uint32_t* offsets, int B, int S, int dim,
               int input_width, const uint8_t* occ_shard, cudaStream_t stream);

  size_t occurrences() const { return n_; }
  size_t distinct() const { return k_; }
  const uint64_t* keys() const { return keys_.get(); }          // (k) first-seen order
  const uint32_t* counts() const { return counts_.get(); }      // (k)
  const uint8_t* shards() const { return shards_.get(); }       // (k), valid when built with occ_shard
  const uint32_t* local_ids() const { return local_.get(); }    // (n) per occurrence
  const uint32_t* key_start() const { return key_start_.get(); }  // (k) first sorted occurrence
  const uint32_t* sorted_base() const { return occ_base_.get(); } // (n) input offset, sorted order

 private:
  Status Reserve(size_t n);

  size_t n_ = 0;
  size_t k_ = 0;
  size_t capacity_ = 0;
  DeviceBuffer<uint64_t> sorted_keys_;
  DeviceBuffer<uint32_t> pos_, sorted_pos_;  // occurrence positions, before/after the sort
  DeviceBuffer<uint32_t> base_;              // (n) input offset per position
  DeviceBuffer<uint32_t> heads_, run_;       // run heads in sorted order; inclusive sum
  DeviceBuffer<uint32_t> first_, rank_;      // first-occurrence flags by position; exclusive sum
  DeviceBuffer<uint32_t> run_head_;          // (runs) sorted index of each run's head
  DeviceBuffer<uint64_t> keys_;
  DeviceBuffer<uint32_t> counts_, local_, key_start_, occ_base_;
  DeviceBuffer<uint8_t> shards_;
  DeviceBuffer<uint8_t> temp_;               // CUB scratch
};

}  // namespace strata::gpu
