// NcclComm: the NCCL communicator of a job's ranks, one NCCL rank per MPI rank in the same
// order, on the device of the rank's first worker, bootstrapped over MPI (rank 0's unique
// id broadcast). NcclDenseSum and NcclAllToAll run their collectives on it.
//
// Ranks that share a GPU: NCCL refuses two ranks of one communicator on one device of a
// host (it tells GPUs apart by host and bus id). Connect then gives each such rank a host
// identity of its own (NCCL_HOSTID, unless the environment sets it), so NCCL connects them
// as it connects hosts, over its network transport (sockets on the node's interfaces).
//
// Thread safety: one thread at a time. Connect is a collective over the job's ranks.
#pragma once

#include <nccl.h>

#include <memory>

#include "strata/comm/comm.h"
#include "strata/common/status.h"

namespace strata::gpu {

// A DeviceError naming the call and NCCL's message, or OK.
Status NcclStatus(ncclResult_t e, const char* call);

class NcclComm {
 public:
  // Collective over comm; every rank returns the same status.
  static Status Connect(Comm* comm, int device, std::unique_ptr<NcclComm>* out);
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  ncclComm_t get() const { return comm_; }
  int device() const { return device_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  // Whether Connect gave this rank a host identity of its own (ranks share its GPU).
  bool over_network() const { return over_network_; }
  // Bytes its users sent other ranks (they count them).
  void CountSent(uint64_t bytes) { bytes_sent_ += bytes; }
  uint64_t bytes_sent() const { return bytes_sent_; }

 private:
  NcclComm(int device, int rank, int size) : device_(device), rank_(rank), size_(size) {}

  const int device_, rank_, size_;
  bool over_network_ = false;
  uint64_t bytes_sent_ = 0;
  ncclComm_t comm_ = nullptr;
};

}  // namespace strata::gpu
