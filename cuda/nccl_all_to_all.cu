// NcclAllToAll: see nccl_all_to_all.cuh.
#include "nccl_all_to_all.cuh"

#include <cstring>
#include <numeric>

#include "cuda_check.cuh"
#include "device_scope.cuh"

namespace strata::gpu {

Status NcclAllToAll::Init() {
  DeviceScope scope(comm_->device());
  const size_t R = static_cast<size_t>(comm_->size());
  STRATA_RETURN_IF_ERROR(stream_.Create());
  return counts_.Reserve(R + R * R);
}

Status NcclAllToAll::AllToAllBytes(const char* send, const std::vector<int64_t>& send_counts,
                                   std::vector<std::string_view>* recv) {
  DeviceScope scope(comm_->device());
  STRATA_RETURN_IF_ERROR(ExchangeCounts(send_counts));
  STRATA_RETURN_IF_ERROR(ExchangeBytes(send, send_counts));
  recv->resize(recv_counts_.size());
  size_t at = 0;
  for (size_t r = 0; r < recv_counts_.size(); ++r) {
    (*recv)[r] = std::string_view(down_.At<char>(at), static_cast<size_t>(recv_counts_[r]));
    at += static_cast<size_t>(recv_counts_[r]);
  }
  const int64_t total = std::accumulate(send_counts.begin(), send_counts.end(), int64_t{0});
  const uint64_t to_others = static_cast<uint64_t>(total - send_counts[comm_->rank()]);
  bytes_sent_ += to_others;
  comm_->CountSent(to_others + (comm_->size() - 1) * comm_->size() * sizeof(int64_t));  // and the counts
  return Status::OK();
}

Status NcclAllToAll::ExchangeCounts(const std::vector<int64_t>& send_counts) {
  const size_t R = static_cast<size_t>(comm_->size()), bytes = R * sizeof(int64_t);
  STRATA_RETURN_IF_ERROR(up_.Reserve(bytes));
  STRATA_RETURN_IF_ERROR(down_.Reserve(R * bytes));
  std::memcpy(up_.At<int64_t>(0), send_counts.data(), bytes);
  STRATA_CUDA_TRY(cudaMemcpyAsync(counts_.get(), up_.At<int64_t>(0), bytes, cudaMemcpyHostToDevice, stream_));
  STRATA_RETURN_IF_ERROR(NcclStatus(
      ncclAllGather(counts_.get(), counts_.get() + R, R, ncclInt64, comm_->get(), stream_), "ncclAllGather"));
  STRATA_CUDA_TRY(cudaMemcpyAsync(down_.At<int64_t>(0), counts_.get() + R, R * bytes, cudaMemcpyDeviceToHost, stream_));
  STRATA_CUDA_TRY(cudaStreamSynchronize(stream_));
  recv_counts_.resize(R);
  for (size_t r = 0; r < R; ++r) recv_counts_[r] = down_.At<int64_t>(0)[r * R + comm_->rank()];
  return Status::OK();
}

Status NcclAllToAll::ExchangeBytes(const char* send, const std::vector<int64_t>& send_counts) {
  const size_t out = std::accumulate(send_counts.begin(), send_counts.end(), size_t{0});
  const size_t in = std::accumulate(recv_counts_.begin(), recv_counts_.end(), size_t{0});
  STRATA_RETURN_IF_ERROR(up_.Reserve(out));
  STRATA_RETURN_IF_ERROR(down_.Reserve(in));
  STRATA_RETURN_IF_ERROR(sent_.Reserve(out));
  STRATA_RETURN_IF_ERROR(received_.Reserve(in));
  std::memcpy(up_.At<char>(0), send, out);
  STRATA_CUDA_TRY(cudaMemcpyAsync(sent_.get(), up_.At<char>(0), out, cudaMemcpyHostToDevice, stream_));
  ncclResult_t e = ncclGroupStart();
  size_t sent_at = 0, received_at = 0;
  for (int r = 0; r < comm_->size() && e == ncclSuccess; ++r) {
    const size_t n_out = static_cast<size_t>(send_counts[r]), n_in = static_cast<size_t>(recv_counts_[r]);
    if (n_out > 0) e = ncclSend(sent_.get() + sent_at, n_out, ncclUint8, r, comm_->get(), stream_);
    if (e == ncclSuccess && n_in > 0) e = ncclRecv(received_.get() + received_at, n_in, ncclUint8, r, comm_->get(), stream_);
    sent_at += n_out;
    received_at += n_in;
  }
  const ncclResult_t end = ncclGroupEnd();
  STRATA_RETURN_IF_ERROR(NcclStatus(e, "ncclSend/ncclRecv"));
  STRATA_RETURN_IF_ERROR(NcclStatus(end, "ncclGroupEnd"));
  STRATA_CUDA_TRY(cudaMemcpyAsync(down_.At<char>(0), received_.get(), in, cudaMemcpyDeviceToHost, stream_));
  STRATA_CUDA_TRY(cudaStreamSynchronize(stream_));
  return Status::OK();
}

}  // namespace strata::gpu
