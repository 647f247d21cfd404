// NcclComm: see nccl_comm.cuh.
#include "nccl_comm.cuh"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_check.cuh"
#include "device_scope.cuh"

namespace strata::gpu {
namespace {

std::string HostName() {
  char name[HOST_NAME_MAX + 1] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

// "host/bus id": how NCCL tells one GPU from another.
Status GpuIdentity(int device, std::string* out) {
  char bus[32] = {};
  STRATA_CUDA_TRY(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
  *out = HostName() + "/" + bus;
  return Status::OK();
}

// Collective: whether another rank trains on this rank's GPU.
Status SharesGpu(Comm* comm, int device, bool* shared) {
  std::string mine;
  STRATA_RETURN_IF_ERROR(comm->AgreeOn(GpuIdentity(device, &mine)));
  std::vector<std::string> all;
  STRATA_RETURN_IF_ERROR(comm->AllGather(mine, &all));
  *shared = std::count(all.begin(), all.end(), mine) > 1;
  return Status::OK();
}

// Rank 0's unique id, on every rank.
Status BroadcastUniqueId(Comm* comm, ncclUniqueId* id) {
  Status local;
  if (comm->rank() == 0) local = NcclStatus(ncclGetUniqueId(id), "ncclGetUniqueId");
  STRATA_RETURN_IF_ERROR(comm->AgreeOn(local));
  std::string bytes(reinterpret_cast<const char*>(id), sizeof *id);
  STRATA_RETURN_IF_ERROR(comm->Broadcast(&bytes, 0));
  std::memcpy(id, bytes.data(), sizeof *id);
  return Status::OK();
}

}  // namespace

Status NcclStatus(ncclResult_t e, const char* call) {
  if (e == ncclSuccess) return Status::OK();
  const char* detail = ncclGetLastError(nullptr);
  return Status::DeviceError(std::string(call) + ": " + ncclGetErrorString(e) +
                             (detail != nullptr && *detail != '\0' ? std::string(" (") + detail + ")" : ""));
}

NcclComm::~NcclComm() {
  // Abort rather than destroy: it never waits for peers, which may be gone on an error path.
  if (comm_ != nullptr) ncclCommAbort(comm_);
}

Status NcclComm::Connect(Comm* comm, int device, std::unique_ptr<NcclComm>* out) {
  std::unique_ptr<NcclComm> c(new NcclComm(device, comm->rank(), comm->size()));
  bool shared = false;
  STRATA_RETURN_IF_ERROR(SharesGpu(comm, device, &shared));
  if (shared && std::getenv("NCCL_HOSTID") == nullptr) {  // before this process's first NCCL call
    const std::string id = HostName() + "-rank-" + std::to_string(comm->rank());
    setenv("NCCL_HOSTID", id.c_str(), 1);
    c->over_network_ = true;
  }
  ncclUniqueId id{};
  STRATA_RETURN_IF_ERROR(BroadcastUniqueId(comm, &id));
  Status local;
  {
    DeviceScope scope(device);
    local = NcclStatus(ncclCommInitRank(&c->comm_, comm->size(), id, comm->rank()), "ncclCommInitRank");
  }
  STRATA_RETURN_IF_ERROR(comm->AgreeOn(local));
  *out = std::move(c);
  return Status::OK();
}

}  // namespace strata::gpu
