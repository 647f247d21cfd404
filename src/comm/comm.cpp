// Comm over an MPI communicator with MPI_ERRORS_RETURN; every MPI code becomes a Status here.
#include "strata/comm/comm.h"

#include <mpi.h>

#include <limits>

namespace strata {
namespace {

Status Check(int code, const char* what) {
  if (code == MPI_SUCCESS) return Status::OK();
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return Status::CommError(std::string(what) + ": " + std::string(text, len));
}

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

bool MpiSession::ThreadMultiple() {
  int provided = 0;
  MPI_Query_thread(&provided);
  return provided >= MPI_THREAD_MULTIPLE;
}

struct Comm::Handle {
  MPI_Comm comm = MPI_COMM_WORLD;
};

Comm::Comm() : Comm(std::make_unique<Handle>()) {}

Comm::Comm(std::unique_ptr<Handle> handle) : handle_(std::move(handle)) {
  MPI_Comm_rank(handle_->comm, &rank_);
  MPI_Comm_size(handle_->comm, &size_);
  MPI_Comm local;
  MPI_Comm_split_type(handle_->comm, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
  MPI_Comm_size(local, &local_size_);
  MPI_Comm_free(&local);
}

Comm::~Comm() {
  if (handle_->comm != MPI_COMM_WORLD) MPI_Comm_free(&handle_->comm);
}

Status Comm::Duplicate(std::unique_ptr<Comm>* out) const {
  auto handle = std::make_unique<Handle>();
  STRATA_RETURN_IF_ERROR(Check(MPI_Comm_dup(handle_->comm, &handle->comm), "MPI_Comm_dup"));
  MPI_Comm_set_errhandler(handle->comm, MPI_ERRORS_RETURN);
  out->reset(new Comm(std::move(handle)));
  return Status::OK();
}

Status Comm::Barrier() { return Check(MPI_Barrier(handle_->comm), "MPI_Barrier"); }

Status Comm::Broadcast(std::string* bytes, int root) {
  int64_t n = static_cast<int64_t>(bytes->size());
  STRATA_RETURN_IF_ERROR(Check(MPI_Bcast(&n, 1, MPI_INT64_T, root, handle_->comm), "MPI_Bcast"));
  if (n > std::numeric_limits<int>::max()) return Status::CommError("broadcast over 2 GiB");
  bytes->resize(static_cast<size_t>(n));
  return Check(MPI_Bcast(bytes->data(), static_cast<int>(n), MPI_BYTE, root, handle_->comm),
               "MPI_Bcast");
}

Status Comm::AllreduceSum(int64_t* values, int n) {
  return Check(MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_INT64_T, MPI_SUM, handle_->comm),
               "MPI_Allreduce");
}

Status Comm::AllreduceSum(double* values, int n) {
  return Check(MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_DOUBLE, MPI_SUM, handle_->comm),
               "MPI_Allreduce");
}

Status Comm::AllreduceMax(int64_t* values, int n) {
  return Check(MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_INT64_T, MPI_MAX, handle_->comm),
               "MPI_Allreduce");
}

// A rank alone sends to itself only: the bytes move, no MPI call and no copy.
Status Comm::AllToAll(std::vector<std::string>&& send, std::vector<std::string>* recv) {
  if (size_ == 1) {
    recv->swap(send);
    send.clear();
    return Status::OK();
  }
  std::vector<int> counts;
  std::string packed;
  STRATA_RETURN_IF_ERROR(Pack(send, &counts, &packed));
  std::vector<std::string>().swap(send);  // at most two copies of the data live at once
  return AllToAllPacked(std::move(packed), counts, recv);
}

Status Comm::AllToAll(const std::vector<std::string>& send, std::vector<std::string>* recv) {
  std::vector<int> counts;
  std::string packed;
  STRATA_RETURN_IF_ERROR(Pack(send, &counts, &packed));
  return AllToAllPacked(std::move(packed), counts, recv);
}

Status Comm::Pack(const std::vector<std::string>& send, std::vector<int>* counts, std::string* packed) {
  size_t total = 0;
  for (const std::string& s : send) total += s.size();
  if (total > static_cast<size_t>(std::numeric_limits<int>::max())) return Status::CommError("all-to-all over 2 GiB");
  counts->clear();
  packed->reserve(total);
  for (const std::string& s : send) {
    counts->push_back(static_cast<int>(s.size()));
    *packed += s;
  }
  return Status::OK();
}

Status Comm::AllToAllPacked(std::string packed, const std::vector<int>& send_counts, std::vector<std::string>* recv) {
  std::vector<int> recv_counts(size_), send_displs(size_), recv_displs(size_);
  for (int r = 1; r < size_; ++r) send_displs[r] = send_displs[r - 1] + send_counts[r - 1];
  STRATA_RETURN_IF_ERROR(Check(MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1,
                                            MPI_INT, handle_->comm), "MPI_Alltoall"));
  int64_t recv_total = 0;
  for (int r = 0; r < size_; ++r) {
    recv_displs[r] = static_cast<int>(recv_total);
    recv_total += recv_counts[r];
  }
  if (recv_total > std::numeric_limits<int>::max()) return Status::CommError("all-to-all over 2 GiB");
  std::string recv_buf(static_cast<size_t>(recv_total), '\0');
  STRATA_RETURN_IF_ERROR(Check(
      MPI_Alltoallv(packed.data(), send_counts.data(), send_displs.data(), MPI_BYTE,
                    recv_buf.data(), recv_counts.data(), recv_displs.data(), MPI_BYTE, handle_->comm),
      "MPI_Alltoallv"));
  bytes_sent_ += static_cast<uint64_t>(packed.size()) - static_cast<uint64_t>(send_counts[rank_]);
  std::string().swap(packed);
  recv->resize(size_);
  for (int r = 0; r < size_; ++r) (*recv)[r].assign(recv_buf, recv_displs[r], recv_counts[r]);
  return Status::OK();
}

Status Comm::AllGather(const std::string& send, std::vector<std::string>* recv) {
  if (size_ == 1) {
    recv->assign(1, send);
    return Status::OK();
  }
  int n = static_cast<int>(send.size());
  std::vector<int> counts(size_), displs(size_);
  STRATA_RETURN_IF_ERROR(Check(MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, handle_->comm),
                               "MPI_Allgather"));
  int64_t total = 0;
  for (int r = 0; r < size_; ++r) {
    displs[r] = static_cast<int>(total);
    total += counts[r];
  }
  if (total > std::numeric_limits<int>::max()) return Status::CommError("all-gather over 2 GiB");
  std::string buf(static_cast<size_t>(total), '\0');
  STRATA_RETURN_IF_ERROR(Check(MPI_Allgatherv(send.data(), n, MPI_BYTE, buf.data(), counts.data(),
                                              displs.data(), MPI_BYTE, handle_->comm),
                               "MPI_Allgatherv"));
  bytes_sent_ += static_cast<uint64_t>(n) * static_cast<uint64_t>(size_ - 1);
  recv->resize(size_);
  for (int r = 0; r < size_; ++r) (*recv)[r].assign(buf, displs[r], counts[r]);
  return Status::OK();
}

Status Comm::AgreeOn(const Status& local) {
  int64_t first_bad = local.ok() ? size_ : rank_;
  int64_t code = 0;
  STRATA_RETURN_IF_ERROR(Check(MPI_Allreduce(&first_bad, &code, 1, MPI_INT64_T, MPI_MIN, handle_->comm),
                               "MPI_Allreduce"));
  if (code == size_) return Status::OK();
  const int root = static_cast<int>(code);
  std::string text = local.ok() ? std::string() : local.message();
  int32_t kind = static_cast<int32_t>(local.code());
  STRATA_RETURN_IF_ERROR(Check(MPI_Bcast(&kind, 1, MPI_INT32_T, root, handle_->comm), "MPI_Bcast"));
  STRATA_RETURN_IF_ERROR(Broadcast(&text, root));
  if (root == rank_) return local;
  return Status::WithCode(static_cast<Status::Code>(kind), "rank " + std::to_string(root) + ": " + text);
}

}  // namespace strata
