// ParamExchange: the sharded parameter server's wire protocol over Comm. The owner side of
// every call is the rank's ShardServer (strata/ps/shard_server.h), which the exchange
// calls with the keys other ranks ask for; one code path serves one rank and many.
//
// Ahead:     Announce  each rank sends the distinct keys of a pass it has read but not yet
//                      pulled to their owners, so their caches know what comes next.
// Per pass:  Pull      each rank sends the distinct keys its workers need to their owners
//                      (OwnerRank); owners answer with rows and remember who subscribed to
//                      each key. One subscriber of each key (the lowest rank) is its
//                      returner. PullReadOnly fetches rows and records nothing.
// Per step:  ReduceGradients  every worker's gradients go to the owner of each key, which
//                      sums them in global worker order (so the sum is bitwise the same for
//                      any ranks x workers split) and sends the sum to every subscriber.
// Pass end:  PushBack  returners send their final rows home; owners store them, and the
//                      pass leaves their in-flight set.
//
// All calls are collectives: every rank calls them in the same order. A call returns a
// local error only after its last collective, so the caller can agree on it (Comm::AgreeOn)
// without leaving a rank waiting. Thread safety: one thread per ParamExchange (and per
// Comm); several exchanges may share one ShardServer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "strata/comm/comm.h"
#include "strata/common/key_index.h"
#include "strata/ps/shard_server.h"

namespace strata {

// One worker's sparse gradients, as views (host memory).
struct SparseGradView {
  const uint64_t* keys = nullptr;    // (n) distinct
  const float* grads = nullptr;      // (n, dim)
  const uint32_t* counts = nullptr;  // (n)
  size_t n = 0;
};

// Routing of one pass on this rank, made by Pull and used by ReduceGradients and PushBack.
class PassRouting {
 public:
  int pass() const { return pass_; }
  // The pass's distinct keys on this rank, in the order of the pulled rows.
  const std::vector<uint64_t>& keys() const { return keys_; }
  size_t size() const { return keys_.size(); }

 private:
  friend class ParamExchange;
  int pass_ = -1;
  std::vector<uint64_t> keys_;
  std::vector<uint8_t> returner_;  // per key: this rank sends its final row home
  // Owner side: slot of each owned key some rank pulled, and its subscriber ranks (CSR).
  std::shared_ptr<KeyIndex> owned_;
  std::vector<uint32_t> sub_begin_;  // (owned keys + 1)
  std::vector<int> sub_ranks_;
};

class ParamExchange {
 public:
  // REQUIRES: comm and server outlive this.
  ParamExchange(Comm* comm, ShardServer* server);

  size_t row_bytes() const { return row_bytes_; }

  // keys: distinct keys this rank will pull for `pass`; their owners pin them.
  Status Announce(int pass, const std::vector<uint64_t>& keys);

  // keys: distinct keys this rank needs for `pass` (moved into the routing). On return
  // rows holds (n, row_bytes) and held (n) the owners' flags (1: an earlier pass in flight
  // holds the row), both in the order of routing->keys().
  Status Pull(int pass, std::vector<uint64_t> keys, std::vector<uint8_t>* rows, std::vector<uint8_t>* held,
              PassRouting* routing);

  // keys: distinct. rows (n, row_bytes) out, in keys' order; owners record nothing.
  Status PullReadOnly(const std::vector<uint64_t>& keys, std::vector<uint8_t>* rows);

  // workers: this rank's workers in order (rank r holds global workers r*G .. r*G+G-1).
  // Out: the job-wide summed gradients of the keys this rank subscribed to and that some
  // worker touched this step: keys (m), grads (m, dim), counts (m).
  Status ReduceGradients(const PassRouting& routing, const std::vector<SparseGradView>& workers,
                         std::vector<uint64_t>* keys, std::vector<float>* grads,
                         std::vector<uint32_t>* counts);

  // rows: (routing.size(), row_bytes), the final rows in routing.keys() order; freed once
  // sent. The owners store the rows they receive and release the pass.
  Status PushBack(const PassRouting& routing, std::vector<uint8_t>* rows);

 private:
  // Sends each key to its owner: asked[r] gets the keys rank r asks of this rank, and
  // position[r] (optional) the index in keys of each key sent to rank r.
  Status KeysToOwners(const std::vector<uint64_t>& keys, std::vector<std::vector<uint64_t>>* asked,
                      std::vector<std::vector<size_t>>* position);
  Status ServePull(int pass, const std::vector<std::vector<uint64_t>>& asked, PassRouting* routing,
                   std::vector<std::string>* reply);
  // The owner's fixed-order sum of one step's gradients.
  void BeginSum(size_t max_keys);
  void AddToSum(uint64_t key, uint32_t count, const float* grad);
  void SendSums(const PassRouting& routing);

  Comm* comm_;
  ShardServer* server_;
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
