// Comm: the MPI world as this rank sees it. Every MPI call of the project goes through
// here and comes back as a Status (the communicator uses MPI_ERRORS_RETURN). Collectives
// must be called by every rank in the same order; AgreeOn turns one rank's local error
// into the same error on every rank so no rank is left waiting in a collective.
//
// Thread safety: one thread per rank calls Comm (MPI is initialised with THREAD_FUNNELED).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/common/status.h"

namespace strata {

class Comm {
 public:
  // REQUIRES: MPI_Init_thread has been called (see MpiSession).
  Comm();

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_size() const { return local_size_; }  // ranks on this node

  Status Barrier();
  Status Broadcast(std::string* bytes, int root);
  Status AllreduceSum(int64_t* values, int n);
  Status AllreduceSum(double* values, int n);
  Status AllreduceMax(int64_t* values, int n);

  // Personalised all-to-all of bytes: send[r] goes to rank r; recv[r] came from rank r.
  // Counts travel first, then the payload with MPI_Alltoallv. Adds to bytes_sent().
  Status AllToAll(const std::vector<std::string>& send, std::vector<std::string>* recv);

  // recv[r] is rank r's bytes.
  Status AllGather(const std::string& send, std::vector<std::string>* recv);

  // Every rank passes its local status; every rank gets back the error of the lowest rank
  // that had one (its message travels too), or OK when all were OK.
  Status AgreeOn(const Status& local);

  uint64_t bytes_sent() const { return bytes_sent_; }

 private:
  int rank_ = 0;
  int size_ = 1;
  int local_size_ = 1;
  uint64_t bytes_sent_ = 0;
};

// RAII MPI_Init_thread / MPI_Finalize for main().
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

}  // namespace strata
