// NcclDenseSum: see nccl_dense_sum.cuh.
#include "nccl_dense_sum.cuh"

#include <algorithm>

#include "cuda_check.cuh"
#include "device_scope.cuh"

namespace strata::gpu {
namespace {

// out[i] = parts[0][i] + parts[1][i] + ... in that order (parts: count rows of len).
__global__ void SumInOrderKernel(const float* parts, size_t len, int count, float* out) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= len) return;
  float s = parts[i];
  for (int k = 1; k < count; ++k) s += parts[static_cast<size_t>(k) * len + i];
  out[i] = s;
}

}  // namespace

NcclDenseSum::NcclDenseSum(NcclComm* comm, size_t n, int workers)
    : comm_(comm), n_(n), workers_(workers),
      slice_((n + static_cast<size_t>(comm->size()) - 1) / static_cast<size_t>(comm->size())) {}

Status NcclDenseSum::Init() {
  DeviceScope scope(comm_->device());
  const size_t ranks = static_cast<size_t>(comm_->size());
  STRATA_RETURN_IF_ERROR(packed_.Reserve(ranks * workers_ * slice_));
  STRATA_RETURN_IF_ERROR(received_.Reserve(ranks * workers_ * SliceLength(comm_->rank())));
  STRATA_RETURN_IF_ERROR(sum_.Reserve(ranks * slice_));
  STRATA_CUDA_TRY(cudaMemset(sum_.get(), 0, sum_.capacity() * sizeof(float)));  // the padding
  return Status::OK();
}

size_t NcclDenseSum::SliceLength(int r) const {
  const size_t begin = std::min(n_, slice_ * static_cast<size_t>(r));
  return std::min(n_, begin + slice_) - begin;
}

Status NcclDenseSum::Sum(const std::vector<const float*>& grads, const std::vector<int>& devices,
                         cudaStream_t stream) {
  DeviceScope scope(comm_->device());
  const int me = comm_->rank();
  STRATA_RETURN_IF_ERROR(Pack(grads, devices, stream));
  STRATA_RETURN_IF_ERROR(Exchange(stream));
  const size_t len = SliceLength(me);
  if (len > 0) {
    SumInOrderKernel<<<GridFor(len), kBlock, 0, stream>>>(received_.get(), len, comm_->size() * workers_,
                                                          sum_.get() + slice_ * me);
    STRATA_CUDA_LAUNCHED();
  }
  STRATA_RETURN_IF_ERROR(NcclStatus(
      ncclAllGather(sum_.get() + slice_ * me, sum_.get(), slice_, ncclFloat, comm_->get(), stream), "ncclAllGather"));
  STRATA_CUDA_TRY(cudaStreamSynchronize(stream));
  comm_->CountSent(sizeof(float) * (workers_ * (n_ - len) + slice_ * (comm_->size() - 1)));
  return Status::OK();
}

Status NcclDenseSum::Pack(const std::vector<const float*>& grads, const std::vector<int>& devices,
                          cudaStream_t stream) {
  for (int r = 0; r < comm_->size(); ++r) {
    const size_t len = SliceLength(r);
    float* part = packed_.get() + slice_ * workers_ * r;
    for (int g = 0; g < workers_ && len > 0; ++g) {
      STRATA_CUDA_TRY(cudaMemcpyPeerAsync(part + len * g, comm_->device(), grads[g] + slice_ * r, devices[g],
                                          len * sizeof(float), stream));
    }
  }
  return Status::OK();
}

// Part r to rank r; from rank q, its G workers' slices of this rank's part, in order.
Status NcclDenseSum::Exchange(cudaStream_t stream) {
  const size_t mine = SliceLength(comm_->rank()) * workers_;
  ncclResult_t e = ncclGroupStart();
  for (int r = 0; r < comm_->size() && e == ncclSuccess; ++r) {
    const size_t theirs = SliceLength(r) * workers_;
    if (theirs > 0) e = ncclSend(packed_.get() + slice_ * workers_ * r, theirs, ncclFloat, r, comm_->get(), stream);
    if (e == ncclSuccess && mine > 0) e = ncclRecv(received_.get() + mine * r, mine, ncclFloat, r, comm_->get(), stream);
  }
  const ncclResult_t end = ncclGroupEnd();
  STRATA_RETURN_IF_ERROR(NcclStatus(e, "ncclSend/ncclRecv"));
  return NcclStatus(end, "ncclGroupEnd");
}

}  // namespace strata::gpu
