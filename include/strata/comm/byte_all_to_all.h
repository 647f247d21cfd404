// ByteAllToAll: a personalised all-to-all of bytes between the job's ranks, the transport
// of a training step's sparse records (ParamExchange::ReduceGradients). Comm carries it
// over MPI; the CUDA backend over NCCL, once its devices are connected
// (HbmPs::step_transport).
//
// Thread safety: one thread at a time; a collective, which every rank calls in the same
// order.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "strata/common/status.h"

namespace strata {

class ByteAllToAll {
 public:
  virtual ~ByteAllToAll() = default;
  // send_counts[r] bytes for rank r, the parts in rank order from send. recv[r] views rank
  // r's bytes in a buffer this object keeps, valid until its next all-to-all. Adds what
  // went to other ranks to bytes_sent().
  virtual Status AllToAllBytes(const char* send, const std::vector<int64_t>& send_counts,
                               std::vector<std::string_view>* recv) = 0;
  virtual uint64_t bytes_sent() const = 0;
};

}  // namespace strata
