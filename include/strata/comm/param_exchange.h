// ParamExchange: the sharded parameter server's wire protocol over Comm. The owner side of
// every call is the rank's ShardServer (strata/ps/shard_server.h), which the exchange
// calls with the keys other ranks ask for; one code path serves one rank and many.
//
// Ahead:     Announce  each rank sends the distinct keys of a pass it has read but not yet
//                      pulled to their owners, so their caches know what comes next.
// Per pass:  Pull      each rank sends the distinct keys its workers need to their owners
//                      (OwnerRank); owners answer with rows and remember who subscribed to
//                      each key. One subscriber of each key is its returner: the owner
//                      when it holds the key too (its replica is bitwise the same, and
//                      keeps the row off the network), else the lowest rank. PullReadOnly
//                      fetches rows and records nothing.
// Per step:  ReduceGradients  every worker's gradients go to the owner of each key, which
//                      sums them in global worker order (so the sum is bitwise the same for
//                      any ranks x workers split) and sends the sum to every subscriber.
//                      Its two all-to-alls go over the step transport: MPI (comm), or NCCL
//                      on the CUDA backend (SetStepTransport). A rank's own records and the
//                      sums it sends itself never enter them: they are taken in their turn
//                      from the views and the sums. On one rank, which owns every key and
//                      is its only subscriber, the sums are the result, with no exchange.
// Pass end:  PushBack  returners send their final rows home; owners store them, and the
//                      pass leaves their in-flight set.
//
// Lower bound: each call also adds to lower_bound_bytes() what this rank would send under
// the least traffic any design needs for it (the measure, against which make bench
// reports MPI bytes): per pass, each distinct key owned elsewhere asked once (8 bytes) and its
// row answered once, and each row home once unless its owner holds it too; per step, each
// distinct touched key owned elsewhere once to its owner and once back (key and gradient).
//
// All calls are collectives: every rank calls them in the same order. A call returns a
// local error only after its last collective, so the caller can agree on it (Comm::AgreeOn)
// without leaving a rank waiting. Thread safety: one thread per ParamExchange (and per
// Comm); several exchanges may share one ShardServer.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "strata/comm/comm.h"
#include "strata/comm/grad_records.h"
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

// Rows as they arrived from their owners, left where they landed (no copy into one array):
// part r holds the rows of the keys rank r owns, keys[begin(r) .. begin(r + 1)) of the key
// list the pull grouped by owner (PassRouting::keys() or PullReadOnly's keys).
class PulledRows {
 public:
  // Calls f(keys + begin(r), count, rows) for each owner r, rows being (count, row_bytes).
  template <typename F>
  void ForEachPart(const std::vector<uint64_t>& keys, F&& f) const {
    for (size_t r = 0; r < parts_.size(); ++r) {
      const size_t n = begin_[r + 1] - begin_[r];
      f(keys.data() + begin_[r], n, reinterpret_cast<const uint8_t*>(parts_[r].data()) + header_bytes_ * n);
    }
  }
  bool empty() const { return parts_.empty(); }
  void Clear() {
    std::vector<std::string>().swap(parts_);
    begin_.clear();
  }

 private:
  friend class ParamExchange;
  std::vector<std::string> parts_;  // per owner: header_bytes_ per key, then the rows
  std::vector<size_t> begin_;       // (owners + 1)
  size_t header_bytes_ = 0;
};

// Routing of one pass on this rank, made by Pull and used by ReduceGradients and PushBack.
class PassRouting {
 public:
  int pass() const { return pass_; }
  // The pass's distinct keys on this rank, grouped by owner rank (the order of the pulled
  // rows; within an owner, the order they were asked in).
  const std::vector<uint64_t>& keys() const { return keys_; }
  size_t size() const { return keys_.size(); }

 private:
  friend class ParamExchange;
  int pass_ = -1;
  std::vector<uint64_t> keys_;
  std::vector<size_t> owner_begin_;  // (ranks + 1): the keys owned by rank r start here
  std::vector<uint8_t> returner_;  // per key: this rank sends its final row home
  // Owner side: slot of each owned key some rank pulled, and its subscriber ranks (CSR).
  std::shared_ptr<KeyIndex> owned_;
  std::vector<uint32_t> sub_begin_;  // (owned keys + 1)
  std::vector<int> sub_ranks_;
  std::vector<uint8_t> pending_;  // per owned key: admission left it without a row (or empty)
  // Whether owned slot `slot` is pending: its sums update no row this pass.
  bool Pending(uint32_t slot) const { return !pending_.empty() && pending_[slot]; }
};

class ParamExchange {
 public:
  // REQUIRES: comm and server outlive this.
  ParamExchange(Comm* comm, ShardServer* server);

  // The transport of ReduceGradients' records (comm until set): another ByteAllToAll over
  // the same ranks, in the same rank order, such as the CUDA backend's over NCCL. REQUIRES:
  // it outlives this; every rank sets the same kind.
  void SetStepTransport(ByteAllToAll* steps) { steps_ = steps; }

  size_t row_bytes() const { return row_bytes_; }
  uint64_t lower_bound_bytes() const { return lower_bound_bytes_; }

  // keys: distinct keys this rank will pull for `pass`; their owners pin them.
  Status Announce(int pass, const std::vector<uint64_t>& keys);

  // keys: distinct keys this rank needs for `pass` (grouped by owner and moved into the
  // routing); examples (n, or empty without admission): how many of this rank's examples of
  // the pass hold each key. On return rows holds their rows and held (n) the owners' flags
  // (1: an earlier pass in flight holds the row), both in the order of routing->keys(). A
  // key admission leaves pending has a zero row, no returner and no gradient sums. The
  // reply this rank serves itself is a buffer of the server's pool (ShardServer::TakeBuffer),
  // whose pages are the process's already after the first pass (a fresh reply faults every
  // page in: 20 ms for a pass's 53 MB on one rank).
  Status Pull(int pass, std::vector<uint64_t> keys, std::vector<uint32_t> examples, PulledRows* rows,
              std::vector<uint8_t>* held, PassRouting* routing);

  // keys: distinct; grouped by owner in place. rows out, in that order; owners record nothing.
  Status PullReadOnly(std::vector<uint64_t>* keys, PulledRows* rows);

  // A staged pass's spent rows: their buffers go back to the server's pool, for the next
  // pull's reply and the next push-back's rows.
  void Recycle(PulledRows spent);

  // workers: this rank's workers in order (rank r holds global workers r*G .. r*G+G-1).
  // Out: the job-wide summed gradients of the keys this rank subscribed to and that some
  // worker touched this step: keys (m), grads (m, dim), counts (m).
  Status ReduceGradients(const PassRouting& routing, const std::vector<SparseGradView>& workers,
                         std::vector<uint64_t>* keys, std::vector<float>* grads,
                         std::vector<uint32_t>* counts);

  // Fills rows (n, row_bytes) with the final rows of keys (n), which are routing keys.
  using RowExport = std::function<Status(const uint64_t* keys, size_t n, uint8_t* rows)>;
  // Exports the rows this rank returns straight into the messages to their owners, which
  // store them and release the pass. An export error is returned after the exchange.
  Status PushBack(const PassRouting& routing, const RowExport& export_rows);

 private:
  // Sends each key to its owner: asked[r] gets the keys rank r asks of this rank. With
  // counts (one a key, else empty), told[r] gets rank r's counts of its asked keys.
  Status KeysToOwners(const std::vector<uint64_t>& keys, std::vector<std::vector<uint64_t>>* asked,
                      const std::vector<uint32_t>& counts = {}, std::vector<std::vector<uint32_t>>* told = nullptr);
  // Reorders keys (stably) by owner rank, and counts (one a key, or empty) with them;
  // begin (ranks + 1) gets where each owner's start.
  void GroupByOwner(std::vector<uint64_t>* keys, std::vector<size_t>* begin, std::vector<uint32_t>* counts = nullptr) const;
  // Admission for a pull: which asked keys stay pending (see ServePull).
  class PullAdmission;
  static void Subscribe(const std::vector<std::vector<uint64_t>>& asked, const std::vector<uint32_t>& slot_of,
                        const std::vector<uint32_t>& subscribers, PassRouting* routing);
  int ReturnerOf(const PassRouting& routing, uint32_t slot) const;
  // PushBack's part for this rank's own server: exported into the server's write-back
  // buffer, or, with a MEM-PS, exported and put a chunk at a time (StoreOwnChunks).
  Status StoreOwnRows(const PassRouting& routing, const RowExport& export_rows);
  Status StoreOwnChunks(const std::vector<uint64_t>& keys, const RowExport& export_rows);
  // The replies of a pull, kept as rows: header_bytes per key precede each part's rows.
  static void KeepReplies(std::vector<std::string>&& recv, const std::vector<size_t>& begin, size_t header_bytes,
                          PulledRows* rows);
  Status ServePull(int pass, const std::vector<std::vector<uint64_t>>& asked,
                   const std::vector<std::vector<uint32_t>>& examples, PassRouting* routing,
                   std::vector<std::string>* reply);
  // owner_of_ for the workers' gradients of one step; returns how many keys are this rank's.
  size_t NoteOwners(const std::vector<SparseGradView>& workers);
  // Distinct keys owned by other ranks among them (after NoteOwners).
  size_t DistinctRemote(const std::vector<SparseGradView>& workers);
  // The owner's fixed-order sum of one step's gradients.
  void BeginSum(size_t max_keys);
  void AddToSum(uint64_t key, uint32_t count, const float* grad);
  // ReduceGradients on one rank: the sums made from the workers' views, less the keys
  // pending admission, are the result (its vectors swapped with the sums' scratch).
  void SumOnOneRank(const PassRouting& routing, const std::vector<SparseGradView>& workers,
                    std::vector<uint64_t>* keys, std::vector<float>* grads, std::vector<uint32_t>* counts);
  // Drops the keys pending admission this pass from the sums, keeping the others' order.
  void DropPendingSums(const PassRouting& routing);
  // This rank's records of the keys it owns, from the views (owner_of_), in worker order.
  void AddOwnRecords(const std::vector<SparseGradView>& workers);
  // Sends each sum to its subscribers but this rank, and receives this rank's in arrived_.
  Status SendSums(const PassRouting& routing);
  // ReduceGradients' result: arrived_'s sums, and this rank's own (own_sums_) in its turn.
  void CollectSums(std::vector<uint64_t>* keys, std::vector<float>* grads, std::vector<uint32_t>* counts) const;

  Comm* comm_;
  ShardServer* server_;
  ByteAllToAll* steps_;
  size_t row_bytes_;
  int dim_;
  uint64_t lower_bound_bytes_ = 0;
  KeyIndex touched_;  // DistinctRemote's scratch
  // ReduceGradients scratch, kept across steps to avoid reallocation.
  KeyIndex sum_slot_;
  std::vector<uint64_t> sum_keys_;
  std::vector<float> sum_grads_;
  std::vector<uint32_t> sum_counts_;
  std::vector<uint32_t> sum_owned_;  // SendSums: each summed key's slot in the pass's owned index
  std::vector<int> owner_of_;        // the owner of each record of the step's views, in order
  std::vector<uint32_t> own_sums_;   // the sums this rank subscribed to, in SendSums' order
  GradRecords records_;                    // the records a step sends
  std::vector<std::string_view> arrived_;  // and receives, in the Comm's buffer
};

// Sums per-worker dense gradients job-wide in global worker order (bitwise independent of
// the ranks x workers split): a reduce-scatter by parameter slices, then an all-gather.
class DenseReducer {
 public:
  DenseReducer(Comm* comm, size_t n) : comm_(comm), n_(n) {}
  // local: this rank's workers' gradients in order, each (n); every rank has as many.
  // sum: (n) out, the same bits on every rank and for every split of the workers into
  // ranks (a fixed order of the job's workers).
  Status Reduce(const std::vector<const float*>& local, float* sum);
  // What a ring all-reduce of the sum sends from this rank, 2 (R - 1) / R of it a call:
  // the least any design moves for it (ParamExchange's lower bound). StepLowerBound is
  // one call's, for sums made elsewhere (on the devices).
  uint64_t lower_bound_bytes() const { return lower_bound_bytes_; }
  static uint64_t StepLowerBound(int ranks, size_t n) {
    return 2 * (static_cast<uint64_t>(ranks) - 1) * n * sizeof(float) / static_cast<uint64_t>(ranks);
  }

 private:
  Comm* comm_;
  size_t n_;
  uint64_t lower_bound_bytes_ = 0;
  // The parts of the vector for `workers` workers a rank, kept while the count stays.
  void Plan(size_t workers);

  size_t planned_workers_ = 0;
  Comm::FloatParts slices_;  // slice r of the vector (rank r sums it)
  Comm::FloatParts sent_;    // to rank r: slice r of each of this rank's workers
  Comm::FloatParts got_;     // from rank r: this rank's slice of each of its workers
  std::vector<float> packed_;    // with several workers: the parts to send, rank by rank
  std::vector<float> received_;  // this rank's slice from every worker of the job, in order
  std::vector<const float*> parts_;  // received_'s parts, one for each worker of the job
};

}  // namespace strata
