// RunTableBench: GpuHashTable insert/find/accumulate throughput against the copy bandwidth.
#include "table_bench.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "device_buffer.cuh"
#include "hash_table.cuh"
#include "strata/common/partition.h"

namespace strata::gpu {
namespace {

// Seconds of device time that body (which enqueues work on stream) takes, by CUDA events.
template <typename Body>
Status TimeOnStream(cudaStream_t stream, const Body& body, double* seconds) {
  cudaEvent_t start = nullptr, stop = nullptr;
  STRATA_CUDA_TRY(cudaEventCreate(&start));
  STRATA_CUDA_TRY(cudaEventCreate(&stop));
  Status st = CudaStatus(cudaEventRecord(start, stream), "cudaEventRecord", __FILE__, __LINE__);
  if (st.ok()) st = body();
  if (st.ok()) st = CudaStatus(cudaEventRecord(stop, stream), "cudaEventRecord", __FILE__, __LINE__);
  if (st.ok()) st = CudaStatus(cudaEventSynchronize(stop), "cudaEventSynchronize", __FILE__, __LINE__);
  float ms = 0;
  if (st.ok()) st = CudaStatus(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime", __FILE__, __LINE__);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  *seconds = ms * 1e-3;
  return st;
}

}  // namespace

Status RunTableBench(size_t keys, int value_floats, int rounds, uint64_t seed, TableBenchResult* out) {
  const size_t vf = static_cast<size_t>(value_floats);
  cudaStream_t stream = nullptr;
  STRATA_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() { cudaStreamDestroy(s); }
  } guard{stream};

  // Distinct keys (Mix64 is a bijection), zero values, queries in shuffled order.
  std::vector<uint64_t> host_keys(keys);
  for (size_t i = 0; i < keys; ++i) host_keys[i] = Mix64(seed + i);
  std::vector<uint64_t> queries = host_keys;
  std::shuffle(queries.begin(), queries.end(), std::mt19937_64(seed));
  DeviceBuffer<uint64_t> d_keys, d_queries;
  DeviceBuffer<uint32_t> d_values, d_out;
  DeviceBuffer<float> d_deltas;
  DeviceBuffer<uint32_t*> d_rows;
  DeviceBuffer<uint32_t> d_missing;
  STRATA_RETURN_IF_ERROR(Upload(host_keys.data(), keys, stream, &d_keys));
  STRATA_RETURN_IF_ERROR(Upload(queries.data(), keys, stream, &d_queries));
  STRATA_RETURN_IF_ERROR(d_values.Reserve(keys * vf));
  STRATA_RETURN_IF_ERROR(d_out.Reserve(keys * vf));
  STRATA_RETURN_IF_ERROR(d_rows.Reserve(keys));
  STRATA_RETURN_IF_ERROR(d_missing.Reserve(1));
  STRATA_CUDA_TRY(cudaMemsetAsync(d_values.get(), 0, keys * vf * sizeof(uint32_t), stream));
  const std::vector<float> ones(keys * vf, 1.0f);
  STRATA_RETURN_IF_ERROR(Upload(ones.data(), ones.size(), stream, &d_deltas));

  // Insert: `rounds` fresh tables, each timed from the insert's launch to its check.
  GpuHashTable table(vf * sizeof(float));
  double insert_s = 0;
  for (int r = 0; r < rounds; ++r) {
    STRATA_RETURN_IF_ERROR(table.Reset(0, keys, stream));
    double s = 0;
    STRATA_RETURN_IF_ERROR(
        TimeOnStream(stream, [&]() { return table.Insert(d_keys.get(), keys, d_values.get(), stream); }, &s));
    insert_s += s;
  }
  DeviceBuffer<TableView> view;
  const TableView v = table.view();
  STRATA_RETURN_IF_ERROR(Upload(&v, 1, stream, &view));

  double find_s = 0, acc_s = 0, copy_s = 0;
  STRATA_RETURN_IF_ERROR(TimeOnStream(stream, [&]() -> Status {
    for (int r = 0; r < rounds; ++r) {
      STRATA_RETURN_IF_ERROR(ResolveRows(view.get(), nullptr, d_queries.get(), keys, d_rows.get(), d_missing.get(), stream));
      STRATA_RETURN_IF_ERROR(CopyRowsOut(d_rows.get(), keys, static_cast<uint32_t>(vf), d_out.get(), stream));
    }
    return Status::OK();
  }, &find_s));
  STRATA_RETURN_IF_ERROR(TimeOnStream(stream, [&]() -> Status {
    for (int r = 0; r < rounds; ++r) {
      STRATA_RETURN_IF_ERROR(table.Accumulate(d_queries.get(), keys, d_deltas.get(), static_cast<uint32_t>(vf), stream));
    }
    return Status::OK();
  }, &acc_s));
  STRATA_RETURN_IF_ERROR(TimeOnStream(stream, [&]() -> Status {
    for (int r = 0; r < rounds; ++r) {
      STRATA_CUDA_TRY(cudaMemcpyAsync(d_out.get(), d_values.get(), keys * vf * sizeof(uint32_t),
                                      cudaMemcpyDeviceToDevice, stream));
    }
    return Status::OK();
  }, &copy_s));

  // Self-check: every value coordinate was accumulated once per round.
  STRATA_RETURN_IF_ERROR(table.Export(d_keys.get(), keys, d_out.get(), stream));
  std::vector<float> values(keys * vf);
  STRATA_RETURN_IF_ERROR(Download(reinterpret_cast<const float*>(d_out.get()), values.size(), stream, values.data()));
  STRATA_CUDA_TRY(cudaStreamSynchronize(stream));
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] != static_cast<float>(rounds)) {
      return Status::Corruption("table bench: key " + std::to_string(host_keys[i / vf]) + " coordinate " +
                                std::to_string(i % vf) + " holds " + std::to_string(values[i]) + " after " +
                                std::to_string(rounds) + " accumulates of 1");
    }
  }
  const double ops = static_cast<double>(keys) * rounds;
  out->insert_keys_per_s = ops / insert_s;
  out->find_keys_per_s = ops / find_s;
  out->accumulate_keys_per_s = ops / acc_s;
  out->find_gbps = ops * (8.0 + 8.0 * vf) / find_s * 1e-9;
  out->accumulate_gbps = ops * (8.0 + 12.0 * vf) / acc_s * 1e-9;
  out->copy_gbps = ops * 8.0 * vf / copy_s * 1e-9;
  return Status::OK();
}

}  // namespace strata::gpu
