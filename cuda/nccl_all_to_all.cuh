// NcclAllToAll: ByteAllToAll over the job's NcclComm, the CUDA backend's transport of a
// training step's sparse records. The counts travel first (an all-gather of every rank's R
// counts), then the bytes: copied through pinned host memory into a device buffer, sent
// and received in one NCCL group, and copied back into pinned memory, where the views of
// recv point.
//
// Thread safety: one thread at a time, the communicator's only user meanwhile; a
// collective over the job's ranks.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "device_buffer.cuh"
#include "nccl_comm.cuh"
#include "pinned_buffer.cuh"
#include "strata/comm/byte_all_to_all.h"

namespace strata::gpu {

class NcclAllToAll final : public ByteAllToAll {
 public:
  // REQUIRES: comm outlives this.
  explicit NcclAllToAll(NcclComm* comm) : comm_(comm) {}

  // The stream, on comm's device.
  Status Init();

  Status AllToAllBytes(const char* send, const std::vector<int64_t>& send_counts,
                       std::vector<std::string_view>* recv) override;
  uint64_t bytes_sent() const override { return bytes_sent_; }

 private:
  // recv_counts_[r]: the bytes rank r sends this rank.
  Status ExchangeCounts(const std::vector<int64_t>& send_counts);
  // The payload, from send (in rank order) into down_ (in rank order).
  Status ExchangeBytes(const char* send, const std::vector<int64_t>& send_counts);

  NcclComm* comm_;
  OwnedStream stream_;
  PinnedBuffer up_, down_;
  DeviceBuffer<int64_t> counts_;  // (R + R * R): this rank's counts, then every rank's
  DeviceBuffer<uint8_t> sent_, received_;
  std::vector<int64_t> recv_counts_;
  uint64_t bytes_sent_ = 0;
};

}  // namespace strata::gpu
