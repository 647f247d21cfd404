// ParamExchange: the sharded parameter server's wire protocol over Comm.
//
// Ahead:     Announce  each rank sends the distinct keys of a pass it has read but not yet
//                      pulled to their owners, so their caches know what comes next.
// Per pass:  Pull      each rank sends the distinct keys its workers need to their owners
//                      (OwnerRank); owners answer with rows from their store and remember
//                      who subscribed to each key. One subscriber of each key (the lowest
//                      rank) is its returner.
// Per step:  ReduceGradients  every worker's gradients go to the owner of each key, which
//                      sums them in global worker order (so the sum is bitwise the same for
//                      any ranks x workers split) and sends the sum to every subscriber.
// Pass end:  PushBack  returners send their final rows home; owners store them.
//
// All calls are collectives: every rank calls them in the same order.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "strata/comm/comm.h"
#include "strata/common/key_index.h"

namespace strata {

// Owner-side row source: fills rows (n, row_bytes) for keys (n), creating absent rows,
// and flags (n) with a byte per key that travels back to the requester as is (the
// pipeline marks rows that an earlier, still running pass holds).
using RowServer = std::function<Status(const uint64_t* keys, size_t n, uint8_t* rows, uint8_t* flags)>;
// Owner-side key sink: told keys (n) that some rank will pull.
using KeySink = std::function<Status(const uint64_t* keys, size_t n)>;
// Owner-side row sink: stores rows (n, row_bytes) of keys (n).
using RowSink = std::function<Status(const uint64_t* keys, size_t n, const uint8_t* rows)>;

// One worker's sparse gradients, as views (host memory).
struct SparseGradView {
  const uint64_t* keys = nullptr;    // (n) distinct
  const float* grads = nullptr;      // (n, dim)
  const uint32_t* counts = nullptr;  // (n)
  size_t n = 0;
};

// Routing state of one pass, made by Pull and used by ReduceGradients and PushBack.
struct PassRouting {
  // Requester side: the keys this rank pulled, and whether it returns each at pass end.
  std::vector<uint64_t> keys;
  std::vector<uint8_t> returner;
  // Owner side: subscriber ranks of each owned key, CSR over slot = index_of.Find(key).
  KeyIndex index_of;
  std::vector<uint32_t> sub_begin;  // (owned keys + 1)
  std::vector<int> sub_ranks;
};

class ParamExchange {
 public:
  ParamExchange(Comm* comm, size_t row_bytes, int dim) : comm_(comm), row_bytes_(row_bytes), dim_(dim) {}

  // keys: distinct keys this rank needs. On return rows holds (keys.size(), row_bytes) and
  // flags (keys.size()) the server's flag bytes, both in the order of keys. When routing
  // is null the pull is read-only (evaluation, refresh): owners record nothing and nothing
  // will be pushed back.
  Status Pull(const std::vector<uint64_t>& keys, const RowServer& serve, std::vector<uint8_t>* rows,
              std::vector<uint8_t>* flags, PassRouting* routing);

  // keys: distinct keys this rank will pull later. Each owner's tell sees the keys it owns,
  // once per requesting rank; nothing comes back.
  Status Announce(const std::vector<uint64_t>& keys, const KeySink& tell);

  // workers: this rank's workers in order (rank r holds global workers r*G .. r*G+G-1).
  // Out: the job-wide summed gradients of the keys this rank subscribed to and that some
  // worker touched this step: keys (m), grads (m, dim), counts (m).
  Status ReduceGradients(const PassRouting& routing, const std::vector<SparseGradView>& workers,
                         std::vector<uint64_t>* keys, std::vector<float>* grads,
                         std::vector<uint32_t>* counts);

  // rows: (routing.keys.size(), row_bytes), the final rows in routing.keys order.
  Status PushBack(const PassRouting& routing, const uint8_t* rows, const RowSink& store);

 private:
  Status PullLocal(const std::vector<uint64_t>& keys, const RowServer& serve, std::vector<uint8_t>* rows,
                   std::vector<uint8_t>* flags, PassRouting* routing);
  // The owner's fixed-order sum of one step's gradients.
  void BeginSum(size_t max_keys);
  void AddToSum(uint64_t key, uint32_t count, const float* grad);

  Comm* comm_;
  size_t row_bytes_;
  int dim_;
  // ReduceGradients scratch, kept across steps to avoid reallocation.
  KeyIndex sum_slot_;
  std::vector<uint64_t> sum_keys_;
  std::vector<float> sum_grads_;
  std::vector<uint32_t> sum_counts_;
  std::vector<std::string> send_, recv_;
};

// Sums per-worker dense gradients job-wide in global worker order (bitwise independent of
// the ranks x workers split): a reduce-scatter by parameter slices, then an all-gather.
class DenseReducer {
 public:
  DenseReducer(Comm* comm, size_t n) : comm_(comm), n_(n) {}
  // local: this rank's workers' gradients in order, each (n). sum: (n) out.
  Status Reduce(const std::vector<const float*>& local, float* sum);

 private:
  Comm* comm_;
  size_t n_;
};

}  // namespace strata
