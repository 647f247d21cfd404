// Comm over an MPI communicator with MPI_ERRORS_RETURN; every MPI code becomes a Status here.
#include "strata/comm/comm.h"

#include <mpi.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>

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
  MPI_Comm_rank(local, &local_rank_);
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

// This rank's own part moves to recv and stays out of the packing, MPI and the copy back
// (three copies of it: half a pull's rows on 2 ranks); a rank alone makes no MPI call.
Status Comm::AllToAll(std::vector<std::string>&& send, std::vector<std::string>* recv) {
  std::string own = std::exchange(send[rank_], std::string());
  if (size_ > 1) {
    std::vector<int64_t> counts;
    std::string packed = std::exchange(packed_, std::string());
    Pack(send, &counts, &packed);
    std::vector<std::string>().swap(send);  // at most two copies of the data live at once
    STRATA_RETURN_IF_ERROR(AllToAllPacked(std::move(packed), counts, recv));
  }
  recv->resize(size_);
  (*recv)[rank_] = std::move(own);
  send.clear();
  return Status::OK();
}

Status Comm::AllToAll(const std::vector<std::string>& send, std::vector<std::string>* recv) {
  std::vector<int64_t> counts;
  std::string packed = std::exchange(packed_, std::string());
  Pack(send, &counts, &packed);
  return AllToAllPacked(std::move(packed), counts, recv);
}

void Comm::Pack(const std::vector<std::string>& send, std::vector<int64_t>* counts, std::string* packed) {
  size_t total = 0;
  for (const std::string& s : send) total += s.size();
  counts->clear();
  packed->clear();
  packed->reserve(total);
  for (const std::string& s : send) {
    counts->push_back(static_cast<int64_t>(s.size()));
    *packed += s;
  }
}

namespace {

// Exclusive prefix sums of counts that the caller checked fit in an int.
std::vector<int> Displacements(const std::vector<int64_t>& counts) {
  std::vector<int> displs(counts.size());
  for (size_t r = 1; r < counts.size(); ++r) displs[r] = displs[r - 1] + static_cast<int>(counts[r - 1]);
  return displs;
}

std::vector<int> Narrow(const std::vector<int64_t>& counts) { return std::vector<int>(counts.begin(), counts.end()); }

}  // namespace

Status Comm::AllToAllPacked(std::string packed, const std::vector<int64_t>& send_counts, std::vector<std::string>* recv) {
  std::vector<std::string_view> parts;
  const Status moved = AllToAllBytes(packed.data(), send_counts, &parts);
  if (moved.ok()) {
    recv->resize(size_);
    for (int r = 0; r < size_; ++r) (*recv)[r].assign(parts[r]);
  }
  large_received_.reset();
  if (packed.capacity() <= kKeptBufferBytes) packed_ = std::move(packed);
  return moved;
}

// MPI's counts are ints: the ranks agree that every rank's send and receive totals fit
// before any payload moves.
Status Comm::AllToAllBytes(const char* send, const std::vector<int64_t>& send_counts,
                           std::vector<std::string_view>* recv) {
  large_received_.reset();
  if (size_ == 1) {
    recv->assign(1, std::string_view(send, static_cast<size_t>(send_counts[0])));
    return Status::OK();
  }
  std::vector<int64_t> recv_counts(size_);
  STRATA_RETURN_IF_ERROR(Check(MPI_Alltoall(send_counts.data(), 1, MPI_INT64_T, recv_counts.data(), 1,
                                            MPI_INT64_T, handle_->comm), "MPI_Alltoall"));
  const int64_t sent = std::accumulate(send_counts.begin(), send_counts.end(), int64_t{0});
  int64_t largest[1] = {std::max(sent, std::accumulate(recv_counts.begin(), recv_counts.end(), int64_t{0}))};
  STRATA_RETURN_IF_ERROR(AllreduceMax(largest, 1));
  if (largest[0] > std::numeric_limits<int>::max()) {
    return Status::CommError("all-to-all of " + std::to_string(largest[0]) +
                             " bytes on one rank, over MPI's 2 GiB (lower --pass-examples, or use more ranks)");
  }
  const std::vector<int> send_n = Narrow(send_counts), recv_n = Narrow(recv_counts);
  const std::vector<int> send_displs = Displacements(send_counts), recv_displs = Displacements(recv_counts);
  char* received = ReceiveBuffer(static_cast<size_t>(recv_displs.back() + recv_n.back()));
  STRATA_RETURN_IF_ERROR(Check(
      MPI_Alltoallv(send, send_n.data(), send_displs.data(), MPI_BYTE,
                    received, recv_n.data(), recv_displs.data(), MPI_BYTE, handle_->comm),
      "MPI_Alltoallv"));
  bytes_sent_ += static_cast<uint64_t>(sent - send_counts[rank_]);
  recv->resize(size_);
  for (int r = 0; r < size_; ++r) (*recv)[r] = std::string_view(received + recv_displs[r], recv_n[r]);
  return Status::OK();
}

// The kept buffer when `bytes` fits the bound, grown as needed; else a new one that lasts
// until the next all-to-all. Neither is zeroed: MPI writes every byte that is read.
char* Comm::ReceiveBuffer(size_t bytes) {
  if (bytes > kKeptBufferBytes) {
    large_received_ = std::make_unique_for_overwrite<char[]>(bytes);
    return large_received_.get();
  }
  if (bytes > received_bytes_) {
    received_ = std::make_unique_for_overwrite<char[]>(bytes);
    received_bytes_ = bytes;
  }
  return received_.get();
}

// Every rank learns every count (int64), so every rank takes the same decision on the size.
Status Comm::AllGather(const std::string& send, std::vector<std::string>* recv) {
  if (size_ == 1) {
    recv->assign(1, send);
    return Status::OK();
  }
  int64_t n = static_cast<int64_t>(send.size());
  std::vector<int64_t> counts(size_);
  STRATA_RETURN_IF_ERROR(Check(MPI_Allgather(&n, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, handle_->comm),
                               "MPI_Allgather"));
  const int64_t total = std::accumulate(counts.begin(), counts.end(), int64_t{0});
  if (total > std::numeric_limits<int>::max()) {
    return Status::CommError("all-gather of " + std::to_string(total) + " bytes, over MPI's 2 GiB");
  }
  const std::vector<int> counts_n = Narrow(counts), displs = Displacements(counts);
  std::string buf(static_cast<size_t>(total), '\0');
  STRATA_RETURN_IF_ERROR(Check(MPI_Allgatherv(send.data(), static_cast<int>(n), MPI_BYTE, buf.data(),
                                              counts_n.data(), displs.data(), MPI_BYTE, handle_->comm),
                               "MPI_Allgatherv"));
  bytes_sent_ += static_cast<uint64_t>(n) * static_cast<uint64_t>(size_ - 1);
  recv->resize(size_);
  for (int r = 0; r < size_; ++r) (*recv)[r].assign(buf, displs[r], counts_n[r]);
  return Status::OK();
}

Status Comm::AllToAllFloats(const float* send, const FloatParts& send_parts, float* recv,
                            const FloatParts& recv_parts) {
  STRATA_RETURN_IF_ERROR(Check(MPI_Alltoallv(send, send_parts.counts.data(), send_parts.displs.data(), MPI_FLOAT,
                                             recv, recv_parts.counts.data(), recv_parts.displs.data(), MPI_FLOAT,
                                             handle_->comm),
                               "MPI_Alltoallv"));
  const int64_t sent = std::accumulate(send_parts.counts.begin(), send_parts.counts.end(), int64_t{0});
  bytes_sent_ += static_cast<uint64_t>(sent - send_parts.counts[rank_]) * sizeof(float);
  return Status::OK();
}

Status Comm::AllGatherFloats(float* data, const FloatParts& parts) {
  STRATA_RETURN_IF_ERROR(Check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, parts.counts.data(),
                                              parts.displs.data(), MPI_FLOAT, handle_->comm),
                               "MPI_Allgatherv"));
  bytes_sent_ += static_cast<uint64_t>(parts.counts[rank_]) * static_cast<uint64_t>(size_ - 1) * sizeof(float);
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
