// Comm: the MPI world as this rank sees it. Every MPI call of the project goes through
// here and comes back as a Status (the communicator uses MPI_ERRORS_RETURN). Collectives
// must be called by every rank in the same order; AgreeOn turns one rank's local error
// into the same error on every rank so no rank is left waiting in a collective.
//
// Thread safety: a Comm is used by one thread at a time. Threads that run collectives at
// the same time (the pipeline's stages) each use their own Comm made by Duplicate(), a
// separate MPI communicator, so their collectives never match each other's.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "strata/comm/byte_all_to_all.h"
#include "strata/common/status.h"

namespace strata {

class Comm final : public ByteAllToAll {
 public:
  // MPI_COMM_WORLD. REQUIRES: MPI_Init_thread has been called (see MpiSession).
  Comm();
  ~Comm() override;
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  // A new communicator over the same ranks (MPI_Comm_dup; collective).
  Status Duplicate(std::unique_ptr<Comm>* out) const;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_size() const { return local_size_; }  // ranks on this node
  int local_rank() const { return local_rank_; }  // this rank's place among them (by rank)

  Status Barrier();
  Status Broadcast(std::string* bytes, int root);
  Status AllreduceSum(int64_t* values, int n);
  Status AllreduceSum(double* values, int n);
  Status AllreduceMax(int64_t* values, int n);

  // Personalised all-to-all of bytes: send[r] goes to rank r; recv[r] came from rank r.
  // Counts travel first, then the payload with MPI_Alltoallv. Adds to bytes_sent(). A
  // rank that would send or receive over 2 GiB makes every rank return the same error (the
  // ranks agree on it before the payload moves, so none waits in a collective alone).
  Status AllToAll(const std::vector<std::string>& send, std::vector<std::string>* recv);
  // The same, consuming send: send[rank()] is moved to recv[rank()], never packed or sent;
  // the rest is freed once packed, so at most two copies of the bytes live at once.
  Status AllToAll(std::vector<std::string>&& send, std::vector<std::string>* recv);
  // The same for bytes the caller laid out: send_counts[r] bytes for rank r, the parts in
  // rank order from send. recv[r] views rank r's bytes in a buffer this Comm keeps, valid
  // until its next all-to-all; a rank alone gets a view of send itself.
  Status AllToAllBytes(const char* send, const std::vector<int64_t>& send_counts,
                       std::vector<std::string_view>* recv) override;

  // recv[r] is rank r's bytes. Over 2 GiB in all is an error on every rank.
  Status AllGather(const std::string& send, std::vector<std::string>* recv);

  // Collectives of floats whose layout every rank knows (no counts travel, nothing is
  // copied on this side): counts[r] floats at displs[r] for each rank r.
  struct FloatParts {
    std::vector<int> counts, displs;
  };
  // send's part r goes to rank r; recv's part r came from rank r. Adds to bytes_sent().
  Status AllToAllFloats(const float* send, const FloatParts& send_parts, float* recv, const FloatParts& recv_parts);
  // In place: data's part r, as rank r holds it, reaches every rank. Adds to bytes_sent().
  Status AllGatherFloats(float* data, const FloatParts& parts);

  // Every rank passes its local status; every rank gets back the error of the lowest rank
  // that had one (its message travels too), or OK when all were OK.
  Status AgreeOn(const Status& local);

  uint64_t bytes_sent() const override { return bytes_sent_; }

 private:
  struct Handle;  // the MPI_Comm, kept out of this header
  explicit Comm(std::unique_ptr<Handle> handle);
  // send's parts, concatenated, and their sizes.
  static void Pack(const std::vector<std::string>& send, std::vector<int64_t>* counts, std::string* packed);
  Status AllToAllPacked(std::string packed, const std::vector<int64_t>& send_counts, std::vector<std::string>* recv);

  // An all-to-all's send and receive buffers are kept for the next when at most this large
  // (a step's gradients, not a pass's rows): no allocation, page faults or zero fill a step.
  static constexpr size_t kKeptBufferBytes = 16 << 20;
  char* ReceiveBuffer(size_t bytes);
  std::string packed_;  // empty while an all-to-all has it
  std::unique_ptr<char[]> received_;
  size_t received_bytes_ = 0;
  std::unique_ptr<char[]> large_received_;  // a receive over the bound, until the next all-to-all

  std::unique_ptr<Handle> handle_;
  int rank_ = 0;
  int size_ = 1;
  int local_size_ = 1;
  int local_rank_ = 0;
  uint64_t bytes_sent_ = 0;
};

// RAII MPI_Init_thread / MPI_Finalize for main().
class MpiSession {
 public:
  // Asks for MPI_THREAD_MULTIPLE (the pipeline's stages call MPI from their own threads).
  MpiSession(int* argc, char*** argv);
  // Whether MPI granted MPI_THREAD_MULTIPLE.
  static bool ThreadMultiple();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

}  // namespace strata
