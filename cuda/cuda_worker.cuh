// One worker of the CUDA HBM-PS: its device, its shard of both table sets, its dense
// replica, its streams, cuBLAS handle and the scratch of its batches (device buffers and
// the pinned host buffers its copies go through). A Worker is used by one thread at a
// time, except its `stage` part, which belongs to the Stage-in thread.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "batch_index.cuh"
#include "cross_cublas.cuh"
#include "device_buffer.cuh"
#include "device_scope.cuh"
#include "hash_table.cuh"
#include "mlp_cublas.cuh"
#include "pinned_buffer.cuh"

namespace strata::gpu {

struct Worker {
  Worker(int dev, size_t row_bytes, const Mlp& model)
      : device(dev), tables{GpuHashTable(row_bytes), GpuHashTable(row_bytes)}, mlp(model) {}

  int device;
  // Declared before everything bound to it (the cuBLAS handle in mlp), so destroyed after.
  OwnedStream stream;
  // The two table sets' shards on this GPU (CudaHbmPs::active_ picks the training one),
  // and per set every shard's view, for lookups across shards: views[set] (G).
  GpuHashTable tables[2];
  DeviceBuffer<TableView> views[2];
  // The Stage-in thread's own stream and upload buffers, so staging overlaps training.
  struct {
    OwnedStream stream;
    DeviceBuffer<uint64_t> keys;
    DeviceBuffer<uint8_t> rows;
  } stage;
  DeviceBuffer<float> params, m, v, grad;
  CublasMlp mlp;
  std::unique_ptr<CublasCrossNet> cross;  // --model dcn; shares mlp's cuBLAS handle
  const float* mlp_input = nullptr;       // the MLP's input of the last Forward: input, x_L or deep
  DeviceBuffer<float> deep;               // --model wdl: the input without its wide weights
  DeviceBuffer<float> dmlp_input;         // dLoss/d(mlp_input) when it is not the input
  // --model dlrm with dense features: the bottom MLP (its own cuBLAS handle, on stream),
  // its input, output z and their gradients.
  std::unique_ptr<CublasMlp> bottom;
  DeviceBuffer<float> dense_in, z, dz, ddense;
  DeviceBatchIndex index;
  // Batch inputs.
  DeviceBuffer<uint64_t> keys;
  DeviceBuffer<uint32_t> offsets;
  DeviceBuffer<float> labels, dense;
  DeviceBuffer<uint8_t> shard;
  DeviceBuffer<uint8_t> mean;  // MeanSlotFlags (S bytes), uploaded once
  // Working buffers; `rows`, `missing`, `counts` and `staged` also serve the bulk calls.
  DeviceBuffer<uint32_t*> rows;
  DeviceBuffer<uint32_t> missing, counts;
  DeviceBuffer<uint8_t> staged;
  DeviceBuffer<float> emb, input, dinput, logits, dparams, grads;
  DeviceBuffer<double> losses;
  // Host side of the per-call copies: every call that fills them synchronizes the stream
  // before it returns, so the next call finds them free.
  PinnedBuffer up, down;
  std::vector<uint8_t> host_shard;
};

}  // namespace strata::gpu
