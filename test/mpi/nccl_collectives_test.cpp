// The CUDA backend's collectives over NCCL under real mpirun. The dense gradient sum,
// against DenseReducer over MPI: two backends of the same seed train the same batches, one
// summing on the GPU (HbmPs::ConnectDevices), the other through host memory; their dense
// parameters and Adam moments must stay bitwise equal. The step transport: parts of
// uneven and zero length arrive whole, twice. One communicator a process, as strata-train
// makes. Every rank's two workers share GPU 0, so the ranks
// of a one-GPU machine share it too (NcclComm connects them over sockets). Skips, with
// one line, where no CUDA device is visible.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "../common/hbm_batches.h"
#include "../unit/cuda_test_util.h"
#include "strata/comm/byte_all_to_all.h"
#include "strata/comm/param_exchange.h"
#include "strata/hbm/hbm_ps.h"

namespace strata {
namespace {

constexpr int kWorkers = 2;

HbmOptions Model() {
  HbmOptions o;
  o.spec.num_slots = 4;
  o.spec.num_dense = 3;
  o.spec.embedding_dim = 8;
  o.spec.mlp = {32, 16};  // 1,697 dense parameters: uneven slices for 2 and 3 ranks
  o.spec.dense_optimizer = DenseOptimizerKind::kAdam;
  o.spec.lr_dense = 0.01f;
  o.workers = kWorkers;
  o.devices.assign(kWorkers, 0);
  o.max_batch = 32;
  return o;
}

// Job worker w's batch of step s; the last worker's batch of step 1 is empty (its chunk
// ran out), which must add zeros.
Batch BatchOf(const ModelSpec& spec, int w, int s, int workers) {
  if (s == 1 && w == workers - 1) {
    Batch empty;
    empty.Clear(spec.num_slots, spec.num_dense);
    return empty;
  }
  return test::RandomBatch(spec, 32, 1000 * s + w);
}

// Rank `from`'s bytes for rank `to`: a length that varies with both (none from rank 1 to
// rank 0), and contents that name them.
std::string PartOf(int from, int to) {
  const size_t n = from == 1 && to == 0 ? 0 : static_cast<size_t>(1000 * from + 7 * to + 3);
  std::string part(n, '\0');
  for (size_t i = 0; i < n; ++i) part[i] = static_cast<char>((i * 31 + from * 7 + to) & 0xff);
  return part;
}

// Two all-to-alls (the second reuses the buffers) deliver every part whole.
void CheckTransport(const Comm& comm, ByteAllToAll* nccl) {
  REQUIRE(nccl != nullptr);
  for (int round = 0; round < 2; ++round) {
    std::string send;
    std::vector<int64_t> counts;
    for (int to = 0; to < comm.size(); ++to) {
      const std::string part = PartOf(comm.rank() + round, to);
      send += part;
      counts.push_back(static_cast<int64_t>(part.size()));
    }
    std::vector<std::string_view> got;
    REQUIRE(nccl->AllToAllBytes(send.data(), counts, &got).ok());
    REQUIRE(got.size() == static_cast<size_t>(comm.size()));
    for (int from = 0; from < comm.size(); ++from) CHECK(got[from] == PartOf(from + round, comm.rank()));
  }
  CHECK(nccl->bytes_sent() > 0);
}

// Three steps of the same batches: nccl sums on the GPU, mpi through DenseReducer.
void CheckDenseSums(Comm* comm, const ModelSpec& spec, HbmPs* nccl, HbmPs* mpi) {
  const int job_workers = comm->size() * kWorkers;
  std::vector<Batch> all;  // every batch this rank's workers see, for the rows to stage
  for (int s = 0; s < 3; ++s) {
    for (int g = 0; g < kWorkers; ++g) all.push_back(BatchOf(spec, comm->rank() * kWorkers + g, s, job_workers));
  }
  test::Stage(*nccl, spec, all, 1);
  test::Stage(*mpi, spec, all, 1);
  DenseReducer reducer(comm, mpi->num_dense_params());
  std::vector<float> sum(mpi->num_dense_params());
  const float scale = 1.0f / static_cast<float>(32 * job_workers);
  for (int s = 0; s < 3; ++s) {
    std::vector<WorkerGrads> on_gpu(kWorkers), on_host(kWorkers);
    std::vector<const float*> views;
    for (int g = 0; g < kWorkers; ++g) {
      const Batch& b = all[s * kWorkers + g];
      REQUIRE(nccl->ComputeGradients(g, b, scale, &on_gpu[g]).ok());
      REQUIRE(mpi->ComputeGradients(g, b, scale, &on_host[g]).ok());
      CHECK(on_gpu[g].dense.empty());  // it stayed on the GPU
      CHECK(on_gpu[g].keys == on_host[g].keys);
      views.push_back(on_host[g].dense.data());
    }
    REQUIRE(nccl->SumAndApplyDense().ok());
    REQUIRE(reducer.Reduce(views, sum.data()).ok());
    REQUIRE(mpi->ApplyDense(sum.data()).ok());
  }
  DenseState a, b;
  REQUIRE(nccl->GetDenseState(&a).ok());
  REQUIRE(mpi->GetDenseState(&b).ok());
  CHECK(a.steps == 3);
  CHECK(a.params == b.params);  // bitwise: float == (no NaN in a model this small)
  CHECK(a.m == b.m);
  CHECK(a.v == b.v);
  CHECK(a.params != std::vector<float>(a.params.size(), 0.0f));
}

// One communicator for the whole process, as strata-train makes.
TEST_CASE("cuda: over NCCL, the step transport delivers what MPI does and the dense sums are DenseReducer's") {
  if (NoGpu()) return;
  Comm comm;
  const HbmOptions o = Model();
  std::unique_ptr<HbmPs> nccl, mpi;
  REQUIRE(NewCudaHbmPs(o, &nccl).ok());
  REQUIRE(NewCudaHbmPs(o, &mpi).ok());
  const Status connected = nccl->ConnectDevices(&comm);
  INFO(connected.ToString());
  REQUIRE(connected.ok());
  CHECK(nccl->sums_dense_on_devices());
  CHECK(!mpi->sums_dense_on_devices());
  CheckTransport(comm, nccl->step_transport());
  CheckDenseSums(&comm, o.spec, nccl.get(), mpi.get());
  CHECK(nccl->device_bytes_sent() > nccl->step_transport()->bytes_sent());  // the dense sums' too
}

TEST_CASE("mpi: the host backend has no devices to sum dense gradients on") {
  Comm comm;
  HbmOptions o = Model();
  o.devices.clear();
  std::unique_ptr<HbmPs> host = NewHostHbmPs(o);
  const Status st = host->ConnectDevices(&comm);
  CHECK(st.code() == Status::Code::kInvalidArgument);
  CHECK(!host->sums_dense_on_devices());
  CHECK(host->SumAndApplyDense().code() == Status::Code::kInvalidArgument);
  CHECK(host->step_transport() == nullptr);
}

}  // namespace
}  // namespace strata
