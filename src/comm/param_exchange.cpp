// ParamExchange and DenseReducer: the per-pass pull, per-step owner-side reduction and
// pass-end push-back of the sharded parameter server, and the fixed-order dense sum.
#include "strata/comm/param_exchange.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <limits>

#include "strata/comm/wire.h"
#include "strata/common/buffer_pool.h"
#include "strata/common/partition.h"
#include "strata/common/prefetch.h"

namespace strata {
namespace {

std::vector<uint64_t> DecodeKeys(const std::string& bytes) {
  std::vector<uint64_t> keys(bytes.size() / sizeof(uint64_t));
  std::memcpy(keys.data(), bytes.data(), keys.size() * sizeof(uint64_t));
  return keys;
}

// out (n) = parts[0] + parts[1] + ... (n each), added in that order.
void SumInOrder(const std::vector<const float*>& parts, size_t n, float* out) {
  std::copy_n(parts[0], n, out);
  for (size_t k = 1; k < parts.size(); ++k) {
    const float* g = parts[k];
    for (size_t i = 0; i < n; ++i) out[i] += g[i];
  }
}

// The keys the ranks asked an owner for, indexed: *slot_of gets each asked key's slot (in
// rank order), *subscribers each slot's count of ranks that asked for it.
std::shared_ptr<KeyIndex> IndexAsked(const std::vector<std::vector<uint64_t>>& asked, std::vector<uint32_t>* slot_of,
                                     std::vector<uint32_t>* subscribers) {
  size_t total = 0;
  for (const auto& a : asked) total += a.size();
  auto owned = std::make_shared<KeyIndex>();
  owned->Reset(total);
  slot_of->reserve(total);
  constexpr size_t kAhead = 16;  // keys between a key's prefetch and its insertion
  for (const auto& a : asked) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (i + kAhead < a.size()) owned->Prefetch(a[i + kAhead]);
      auto [slot, fresh] = owned->Insert(a[i]);
      if (fresh) subscribers->push_back(0);
      ++(*subscribers)[slot];
      slot_of->push_back(slot);
    }
  }
  return owned;
}

}  // namespace

ParamExchange::ParamExchange(Comm* comm, ShardServer* server)
    : comm_(comm), server_(server), steps_(comm), row_bytes_(server->row_bytes()), dim_(server->dim()) {}

// This rank's own keys and counts stay in vectors, never packed into a message and read
// back: on one rank, every key.
Status ParamExchange::KeysToOwners(const std::vector<uint64_t>& keys, std::vector<std::vector<uint64_t>>* asked,
                                   const std::vector<uint32_t>& counts, std::vector<std::vector<uint32_t>>* told) {
  const int ranks = comm_->size(), me = comm_->rank();
  assert(!told || counts.size() == keys.size());
  std::vector<std::string> send(ranks), recv;
  std::vector<uint64_t> own_keys;
  std::vector<uint32_t> own_counts;
  own_keys.reserve(keys.size() / ranks);
  for (size_t i = 0; i < keys.size(); ++i) {
    const int owner = OwnerRank(keys[i], ranks);
    if (owner != me) {
      wire::Put(&send[owner], keys[i]);
    } else {
      own_keys.push_back(keys[i]);
      if (told) own_counts.push_back(counts[i]);
    }
  }
  for (size_t i = 0; told && i < keys.size(); ++i) {  // each owner's part: its keys, then their counts
    const int owner = OwnerRank(keys[i], ranks);
    if (owner != me) wire::Put(&send[owner], counts[i]);
  }
  STRATA_RETURN_IF_ERROR(comm_->AllToAll(std::move(send), &recv));
  asked->assign(ranks, {});
  if (told) told->assign(ranks, {});
  for (int r = 0; r < ranks; ++r) {
    if (r == me) {
      (*asked)[r] = std::move(own_keys);
      if (told) (*told)[r] = std::move(own_counts);
      continue;
    }
    std::string& part = recv[r];
    if (told) {
      const size_t n = part.size() / (sizeof(uint64_t) + sizeof(uint32_t));
      (*told)[r].resize(n);
      std::memcpy((*told)[r].data(), part.data() + n * sizeof(uint64_t), n * sizeof(uint32_t));
      part.resize(n * sizeof(uint64_t));
    }
    (*asked)[r] = DecodeKeys(part);
  }
  return Status::OK();
}

void ParamExchange::GroupByOwner(std::vector<uint64_t>* keys, std::vector<size_t>* begin,
                                 std::vector<uint32_t>* counts) const {
  const int ranks = comm_->size();
  begin->assign(ranks + 1, 0);
  if (ranks == 1) {
    (*begin)[1] = keys->size();
    return;
  }
  for (uint64_t key : *keys) ++(*begin)[OwnerRank(key, ranks) + 1];
  for (int r = 0; r < ranks; ++r) (*begin)[r + 1] += (*begin)[r];
  std::vector<size_t> at(begin->begin(), begin->end() - 1);
  std::vector<uint64_t> grouped(keys->size());
  const bool with_counts = counts && !counts->empty();
  std::vector<uint32_t> grouped_counts(with_counts ? counts->size() : 0);
  for (size_t i = 0; i < keys->size(); ++i) {
    const size_t to = at[OwnerRank((*keys)[i], ranks)]++;
    grouped[to] = (*keys)[i];
    if (with_counts) grouped_counts[to] = (*counts)[i];
  }
  keys->swap(grouped);
  if (with_counts) counts->swap(grouped_counts);
}

void ParamExchange::KeepReplies(std::vector<std::string>&& recv, const std::vector<size_t>& begin,
                                size_t header_bytes, PulledRows* rows) {
  rows->parts_ = std::move(recv);
  rows->begin_ = begin;
  rows->header_bytes_ = header_bytes;
}

Status ParamExchange::Announce(int pass, const std::vector<uint64_t>& keys) {
  std::vector<std::vector<uint64_t>> asked;
  STRATA_RETURN_IF_ERROR(KeysToOwners(keys, &asked));
  for (const std::vector<uint64_t>& told : asked) {
    STRATA_RETURN_IF_ERROR(server_->Announce(pass, told.data(), told.size()));
  }
  return Status::OK();
}

// Admission on the owner's side of one pull: the job-wide count of the pass's examples
// holding each owned key, and one decision a pass for each key the server has no row for.
class ParamExchange::PullAdmission {
 public:
  // Off (pending() is always false) when the server does not admit.
  PullAdmission(ShardServer* server, int pass, size_t owned, const std::vector<std::vector<uint32_t>>& examples,
                const std::vector<uint32_t>& slot_of)
      : server_(server), pass_(pass) {
    if (!server->admits()) return;
    total_.assign(owned, 0);
    state_.assign(owned, kUndecided);
    size_t at = 0;
    for (const auto& counts : examples) {
      for (uint32_t c : counts) total_[slot_of[at++]] += c;
    }
  }
  bool on() const { return !state_.empty(); }
  bool pending(uint32_t slot) const { return on() && state_[slot] == kPending; }

  // After one requester's pull: keys (n) with their owned slots and the server's fresh
  // flags. Decides the fresh keys not decided yet and zeroes the rows (n, row_bytes) of the
  // pending ones.
  void Decide(const uint64_t* keys, const uint32_t* slots, const uint8_t* fresh, size_t n, uint8_t* rows,
              size_t row_bytes) {
    std::vector<uint64_t> ask;
    std::vector<uint32_t> counts, at;
    for (size_t i = 0; i < n; ++i) {
      if (!fresh[i] || state_[slots[i]] != kUndecided) continue;
      ask.push_back(keys[i]);
      counts.push_back(total_[slots[i]]);
      at.push_back(slots[i]);
      state_[slots[i]] = kAsked;
    }
    std::vector<uint8_t> admitted(ask.size());
    if (!ask.empty()) server_->Admit(pass_, ask.data(), counts.data(), ask.size(), admitted.data());
    for (size_t j = 0; j < ask.size(); ++j) state_[at[j]] = admitted[j] ? kAdmitted : kPending;
    for (size_t i = 0; i < n; ++i) {
      if (fresh[i] && state_[slots[i]] == kPending) std::fill_n(rows + i * row_bytes, row_bytes, uint8_t{0});
    }
  }

  // Per owned slot: 1 for a pending key (empty when off).
  std::vector<uint8_t> PendingFlags() const {
    std::vector<uint8_t> flags(state_.size());
    for (size_t s = 0; s < state_.size(); ++s) flags[s] = state_[s] == kPending;
    return flags;
  }

 private:
  enum State : uint8_t { kUndecided, kAsked, kAdmitted, kPending };
  ShardServer* server_;
  int pass_;
  std::vector<uint32_t> total_;  // per owned slot
  std::vector<uint8_t> state_;   // per owned slot
};

// Subscriber lists (CSR) of the owned keys, each in ascending rank order: slot_of holds the
// owned slot of every asked key in rank order, subscribers the count of each slot.
void ParamExchange::Subscribe(const std::vector<std::vector<uint64_t>>& asked, const std::vector<uint32_t>& slot_of,
                              const std::vector<uint32_t>& subscribers, PassRouting* routing) {
  routing->sub_begin_.assign(subscribers.size() + 1, 0);
  for (size_t s = 0; s < subscribers.size(); ++s) routing->sub_begin_[s + 1] = routing->sub_begin_[s] + subscribers[s];
  std::vector<uint32_t> fill(routing->sub_begin_.begin(), routing->sub_begin_.end() - 1);
  routing->sub_ranks_.resize(slot_of.size());
  size_t at = 0;
  for (size_t r = 0; r < asked.size(); ++r) {
    for (size_t i = 0; i < asked[r].size(); ++i) routing->sub_ranks_[fill[slot_of[at++]]++] = static_cast<int>(r);
  }
}

// The rank that sends an owned key's final row home: this owner itself when it holds the
// key too (every replica is bitwise the same, so nothing need cross the network), else the
// lowest subscriber.
int ParamExchange::ReturnerOf(const PassRouting& routing, uint32_t slot) const {
  for (uint32_t j = routing.sub_begin_[slot]; j < routing.sub_begin_[slot + 1]; ++j) {
    if (routing.sub_ranks_[j] == comm_->rank()) return comm_->rank();
  }
  return routing.sub_ranks_[routing.sub_begin_[slot]];
}

// Owner side of a pull: note every requested key's subscribers and its returner, serve the
// keys, decide admission, and hold the pass. Each reply is n (returner, held) byte pairs,
// then the n rows, served straight into it; the one to this rank itself is a buffer of the
// server's pool, taken once the write-back has given its buffers back. An error is
// returned once every reply is made, for the exchange that follows.
Status ParamExchange::ServePull(int pass, const std::vector<std::vector<uint64_t>>& asked,
                                const std::vector<std::vector<uint32_t>>& examples, PassRouting* routing,
                                std::vector<std::string>* reply) {
  std::vector<uint32_t> slot_of;      // per asked key, in rank order: its owned slot
  std::vector<uint32_t> subscribers;  // per owned slot
  std::shared_ptr<KeyIndex> owned = IndexAsked(asked, &slot_of, &subscribers);
  Subscribe(asked, slot_of, subscribers, routing);
  PullAdmission admission(server_, pass, subscribers.size(), examples, slot_of);
  Status local = server_->FlushWriteBack();
  reply->assign(asked.size(), std::string());
  const size_t me = static_cast<size_t>(comm_->rank());
  (*reply)[me] = server_->TakeBuffer(asked[me].size() * (2 + row_bytes_));
  const uint32_t* slots = slot_of.data();
  for (size_t r = 0; r < asked.size(); ++r) {
    const size_t n = asked[r].size();
    ResizeToOverwrite(&(*reply)[r], n * (2 + row_bytes_));
    auto* pairs = reinterpret_cast<uint8_t*>((*reply)[r].data());
    std::vector<uint8_t> held(n, 0), fresh(admission.on() ? n : 0);
    if (local.ok()) local = server_->Pull(pass, asked[r].data(), n, pairs + 2 * n, held.data(), fresh.data());
    if (local.ok() && admission.on()) admission.Decide(asked[r].data(), slots, fresh.data(), n, pairs + 2 * n, row_bytes_);
    for (size_t i = 0; i < n; ++i) {
      pairs[2 * i] = ReturnerOf(*routing, slots[i]) == static_cast<int>(r) && !admission.pending(slots[i]);
      // The lower bound's row home: from a rank other than this owner, once a key.
      if (pairs[2 * i] && static_cast<int>(r) != comm_->rank()) lower_bound_bytes_ += row_bytes_;
      pairs[2 * i + 1] = held[i];
    }
    slots += n;
  }
  routing->owned_ = owned;
  routing->pending_ = admission.PendingFlags();
  if (local.ok()) server_->Hold(pass, std::move(owned), routing->pending_);
  return local;
}

Status ParamExchange::Pull(int pass, std::vector<uint64_t> keys, std::vector<uint32_t> examples, PulledRows* rows,
                           std::vector<uint8_t>* held, PassRouting* routing) {
  GroupByOwner(&keys, &routing->owner_begin_, &examples);
  std::vector<std::vector<uint64_t>> asked;
  std::vector<std::vector<uint32_t>> told;
  STRATA_RETURN_IF_ERROR(KeysToOwners(keys, &asked, examples, server_->admits() ? &told : nullptr));
  examples = {};
  std::vector<std::string> reply, recv;
  const Status served = ServePull(pass, asked, told, routing, &reply);
  asked.clear();
  told.clear();
  STRATA_RETURN_IF_ERROR(comm_->AllToAll(std::move(reply), &recv));
  STRATA_RETURN_IF_ERROR(served);
  const std::vector<size_t>& begin = routing->owner_begin_;
  const size_t own = begin[comm_->rank() + 1] - begin[comm_->rank()];
  lower_bound_bytes_ += (keys.size() - own) * (sizeof(uint64_t) + row_bytes_);
  routing->pass_ = pass;
  routing->returner_.resize(keys.size());
  held->resize(keys.size());
  for (size_t r = 0; r < recv.size(); ++r) {
    const auto* pairs = reinterpret_cast<const uint8_t*>(recv[r].data());
    for (size_t j = 0; j < begin[r + 1] - begin[r]; ++j) {
      routing->returner_[begin[r] + j] = pairs[2 * j];
      (*held)[begin[r] + j] = pairs[2 * j + 1];
    }
  }
  KeepReplies(std::move(recv), begin, 2, rows);
  routing->keys_ = std::move(keys);
  return Status::OK();
}

Status ParamExchange::PullReadOnly(std::vector<uint64_t>* keys, PulledRows* rows) {
  std::vector<size_t> begin;
  GroupByOwner(keys, &begin);
  std::vector<std::vector<uint64_t>> asked;
  STRATA_RETURN_IF_ERROR(KeysToOwners(*keys, &asked));
  std::vector<std::string> reply(asked.size()), recv;
  Status local;
  for (size_t r = 0; r < asked.size(); ++r) {
    ResizeToOverwrite(&reply[r], asked[r].size() * row_bytes_);
    if (local.ok()) {
      local = server_->PullReadOnly(asked[r].data(), asked[r].size(), reinterpret_cast<uint8_t*>(reply[r].data()));
    }
  }
  STRATA_RETURN_IF_ERROR(comm_->AllToAll(std::move(reply), &recv));
  STRATA_RETURN_IF_ERROR(local);
  KeepReplies(std::move(recv), begin, 0, rows);
  return Status::OK();
}

void ParamExchange::BeginSum(size_t max_keys) {
  sum_slot_.Reset(max_keys);
  sum_keys_.clear();
  sum_counts_.clear();
  sum_grads_.clear();
}

void ParamExchange::AddToSum(uint64_t key, uint32_t count, const float* g) {
  auto [slot, fresh] = sum_slot_.Insert(key);
  if (fresh) {
    sum_keys_.push_back(key);
    sum_counts_.push_back(count);
    sum_grads_.insert(sum_grads_.end(), g, g + dim_);
  } else {
    sum_counts_[slot] += count;
    float* acc = &sum_grads_[static_cast<size_t>(slot) * dim_];
    for (int d = 0; d < dim_; ++d) acc[d] += g[d];
  }
}

// Owner side: each summed key goes to every rank that subscribed to it this pass, but this
// rank, whose sums are noted (own_sums_) for CollectSums. The lookups (the owned index,
// then the subscriber lists) miss the cache on a large pass, so each is started a few keys
// before it is used.
Status ParamExchange::SendSums(const PassRouting& routing) {
  constexpr size_t kAhead = 8;
  const int me = comm_->rank();
  const size_t n = sum_keys_.size();
  sum_owned_.resize(n);
  for (size_t s = 0; s < n; ++s) {
    if (s + kAhead < n) routing.owned_->Prefetch(sum_keys_[s + kAhead]);
    sum_owned_[s] = routing.owned_->Find(sum_keys_[s]);
    assert(sum_owned_[s] != KeyIndex::kNone);
  }
  own_sums_.clear();
  int visits = 0;  // Pack visits twice; own_sums_ is filled on the first
  records_.Pack(comm_->size(), dim_, [&](const auto& emit) {
    const bool first_visit = visits++ == 0;
    for (size_t s = 0; s < n; ++s) {
      if (s + kAhead < n) PrefetchLine(&routing.sub_begin_[sum_owned_[s + kAhead]]);
      if (s + kAhead / 2 < n) PrefetchLine(&routing.sub_ranks_[routing.sub_begin_[sum_owned_[s + kAhead / 2]]]);
      const uint32_t slot = sum_owned_[s];
      if (routing.Pending(slot)) continue;  // no update
      for (uint32_t j = routing.sub_begin_[slot]; j < routing.sub_begin_[slot + 1]; ++j) {
        const int to = routing.sub_ranks_[j];
        if (to != me) {
          emit(to, sum_keys_[s], sum_counts_[s], &sum_grads_[s * dim_]);
        } else if (first_visit) {
          own_sums_.push_back(static_cast<uint32_t>(s));
        }
      }
    }
  });
  return steps_->AllToAllBytes(records_.data(), records_.byte_counts(), &arrived_);
}

// REQUIRES: owner_of_ holds the owners of the workers' keys (NoteOwners).
size_t ParamExchange::DistinctRemote(const std::vector<SparseGradView>& workers) {
  const int me = comm_->rank();
  if (workers.size() == 1) {  // one worker's keys are distinct already: no index to fill
    return static_cast<size_t>(owner_of_.size() - std::count(owner_of_.begin(), owner_of_.end(), me));
  }
  touched_.Reset(owner_of_.size());
  size_t remote = 0, at = 0;
  for (const SparseGradView& v : workers) {
    for (size_t i = 0; i < v.n; ++i, ++at) {
      if (owner_of_[at] != me && touched_.Insert(v.keys[i]).second) ++remote;
    }
  }
  return remote;
}

// owner_of_ = the owner of each of the workers' keys, in order; returns how many are this
// rank's.
size_t ParamExchange::NoteOwners(const std::vector<SparseGradView>& workers) {
  const int ranks = comm_->size();
  owner_of_.clear();
  for (const SparseGradView& v : workers) {
    for (size_t i = 0; i < v.n; ++i) owner_of_.push_back(OwnerRank(v.keys[i], ranks));
  }
  return static_cast<size_t>(std::count(owner_of_.begin(), owner_of_.end(), comm_->rank()));
}

// What the two exchanges give on one rank: the records arrive from this rank alone, in
// worker order, and every summed key goes back to it unless pending.
void ParamExchange::SumOnOneRank(const PassRouting& routing, const std::vector<SparseGradView>& workers,
                                 std::vector<uint64_t>* keys, std::vector<float>* grads,
                                 std::vector<uint32_t>* counts) {
  size_t n = 0;
  for (const SparseGradView& v : workers) n += v.n;
  BeginSum(n);
  for (const SparseGradView& v : workers) {
    for (size_t i = 0; i < v.n; ++i) AddToSum(v.keys[i], v.counts[i], v.grads + i * dim_);
  }
  if (!routing.pending_.empty()) DropPendingSums(routing);
  keys->swap(sum_keys_);
  grads->swap(sum_grads_);
  counts->swap(sum_counts_);
}

void ParamExchange::DropPendingSums(const PassRouting& routing) {
  size_t kept = 0;
  for (size_t s = 0; s < sum_keys_.size(); ++s) {
    const uint32_t slot = routing.owned_->Find(sum_keys_[s]);
    assert(slot != KeyIndex::kNone);
    if (routing.Pending(slot)) continue;  // no update
    sum_keys_[kept] = sum_keys_[s];
    sum_counts_[kept] = sum_counts_[s];
    std::memmove(&sum_grads_[kept * dim_], &sum_grads_[s * dim_], sizeof(float) * static_cast<size_t>(dim_));
    ++kept;
  }
  sum_keys_.resize(kept);
  sum_counts_.resize(kept);
  sum_grads_.resize(kept * dim_);
}

// This rank's own records and the sums it sends itself never enter a message: each is
// taken from the views or the sums in its turn (rank me in rank order), so the order, and
// so every bit, is the exchange's.
Status ParamExchange::ReduceGradients(const PassRouting& routing, const std::vector<SparseGradView>& workers,
                                      std::vector<uint64_t>* keys, std::vector<float>* grads,
                                      std::vector<uint32_t>* counts) {
  const int ranks = comm_->size(), me = comm_->rank();
  if (ranks == 1) {
    SumOnOneRank(routing, workers, keys, grads, counts);
    return Status::OK();
  }
  const size_t record = GradRecords::RecordBytes(dim_);
  const size_t own = NoteOwners(workers);
  lower_bound_bytes_ += 2 * DistinctRemote(workers) * (sizeof(uint64_t) + sizeof(float) * dim_);
  records_.Pack(ranks, dim_, [&](const auto& emit) {
    size_t at = 0;
    for (const SparseGradView& v : workers) {
      for (size_t i = 0; i < v.n; ++i, ++at) {
        if (owner_of_[at] != me) emit(owner_of_[at], v.keys[i], v.counts[i], v.grads + i * dim_);
      }
    }
  });
  STRATA_RETURN_IF_ERROR(steps_->AllToAllBytes(records_.data(), records_.byte_counts(), &arrived_));

  // Ranks in ascending order and workers in order inside each, so every key's
  // contributions are added in global worker order.
  size_t arrived = own;
  for (std::string_view r : arrived_) arrived += r.size() / record;
  BeginSum(arrived);
  for (int r = 0; r < ranks; ++r) {
    if (r == me) {
      AddOwnRecords(workers);
      continue;
    }
    GradRecords::ForEach(arrived_[r], dim_, [&](uint64_t key, uint32_t count, const float* g) { AddToSum(key, count, g); });
  }
  STRATA_RETURN_IF_ERROR(SendSums(routing));
  CollectSums(keys, grads, counts);
  return Status::OK();
}

void ParamExchange::AddOwnRecords(const std::vector<SparseGradView>& workers) {
  const int me = comm_->rank();
  size_t at = 0;
  for (const SparseGradView& v : workers) {
    for (size_t i = 0; i < v.n; ++i, ++at) {
      if (owner_of_[at] == me) AddToSum(v.keys[i], v.counts[i], v.grads + i * dim_);
    }
  }
}

// The sums this rank subscribed to, in rank order: each other owner's as they arrived, its
// own (own_sums_) in their turn.
void ParamExchange::CollectSums(std::vector<uint64_t>* keys, std::vector<float>* grads,
                                std::vector<uint32_t>* counts) const {
  const size_t record = GradRecords::RecordBytes(dim_), grad_bytes = sizeof(float) * static_cast<size_t>(dim_);
  size_t total = own_sums_.size();
  for (std::string_view r : arrived_) total += r.size() / record;
  keys->resize(total);
  counts->resize(total);
  grads->resize(total * dim_);
  size_t at = 0;
  const auto add = [&](uint64_t key, uint32_t count, const float* g) {
    (*keys)[at] = key;
    (*counts)[at] = count;
    std::memcpy(grads->data() + at * dim_, g, grad_bytes);
    ++at;
  };
  for (size_t r = 0; r < arrived_.size(); ++r) {
    if (static_cast<int>(r) != comm_->rank()) {
      GradRecords::ForEach(arrived_[r], dim_, add);
      continue;
    }
    for (uint32_t s : own_sums_) add(sum_keys_[s], sum_counts_[s], &sum_grads_[static_cast<size_t>(s) * dim_]);
  }
}

// The rows this rank owns go to its server in chunks, through one small buffer. On the
// wire each other owner's part is its keys, then their rows (exported straight into the
// message), so the owner stores straight from the received bytes.
Status ParamExchange::PushBack(const PassRouting& routing, const RowExport& export_rows) {
  const int ranks = comm_->size();
  std::vector<std::string> send(ranks), recv;
  Status local = StoreOwnRows(routing, export_rows);
  for (int r = 0; r < ranks; ++r) {
    if (r == comm_->rank()) continue;
    size_t n = 0;
    for (size_t i = routing.owner_begin_[r]; i < routing.owner_begin_[r + 1]; ++i) n += routing.returner_[i];
    ResizeToOverwrite(&send[r], n * (sizeof(uint64_t) + row_bytes_));
    auto* keys = reinterpret_cast<uint64_t*>(send[r].data());
    size_t at = 0;
    for (size_t i = routing.owner_begin_[r]; i < routing.owner_begin_[r + 1]; ++i) {
      if (routing.returner_[i]) keys[at++] = routing.keys_[i];
    }
    if (local.ok()) local = export_rows(keys, n, reinterpret_cast<uint8_t*>(send[r].data()) + n * sizeof(uint64_t));
  }
  STRATA_RETURN_IF_ERROR(comm_->AgreeOn(local));  // no owner stores a row that was not exported
  STRATA_RETURN_IF_ERROR(comm_->AllToAll(std::move(send), &recv));
  for (std::string& part : recv) {
    const size_t n = part.size() / (sizeof(uint64_t) + row_bytes_);
    const auto* keys = reinterpret_cast<const uint64_t*>(part.data());
    const auto* got = reinterpret_cast<const uint8_t*>(part.data() + n * sizeof(uint64_t));
    if (local.ok()) local = server_->Store(keys, n, got);
    std::string().swap(part);
  }
  if (local.ok()) local = server_->Release(routing.pass_);
  return local;
}

Status ParamExchange::StoreOwnRows(const PassRouting& routing, const RowExport& export_rows) {
  std::vector<uint64_t> keys;
  const int me = comm_->rank();
  for (size_t i = routing.owner_begin_[me]; i < routing.owner_begin_[me + 1]; ++i) {
    if (routing.returner_[i]) keys.push_back(routing.keys_[i]);
  }
  if (server_->caches()) return StoreOwnChunks(keys, export_rows);
  // Buffered until the next pull: exported straight into the buffer the server keeps.
  std::string rows = server_->TakeBuffer(keys.size() * row_bytes_);
  const Status st = export_rows(keys.data(), keys.size(), reinterpret_cast<uint8_t*>(rows.data()));
  if (!st.ok()) {
    server_->KeepBuffer(std::move(rows));
    return st;
  }
  return server_->Store(std::move(keys), std::move(rows));
}

// Put at once (a MEM-PS): a chunk at a time, through one chunk's buffer.
Status ParamExchange::StoreOwnChunks(const std::vector<uint64_t>& keys, const RowExport& export_rows) {
  constexpr size_t kChunkRows = 16384;
  std::vector<uint8_t> rows;
  for (size_t begin = 0; begin < keys.size(); begin += kChunkRows) {
    const size_t n = std::min(kChunkRows, keys.size() - begin);
    rows.resize(n * row_bytes_);
    STRATA_RETURN_IF_ERROR(export_rows(keys.data() + begin, n, rows.data()));
    STRATA_RETURN_IF_ERROR(server_->Store(keys.data() + begin, n, rows.data()));
  }
  return Status::OK();
}

void ParamExchange::Recycle(PulledRows spent) {
  for (std::string& part : spent.parts_) server_->KeepBuffer(std::move(part));
}

void DenseReducer::Plan(size_t workers) {
  const int ranks = comm_->size();
  auto slice_begin = [&](int r) { return n_ * static_cast<size_t>(r) / static_cast<size_t>(ranks); };
  const size_t len = slice_begin(comm_->rank() + 1) - slice_begin(comm_->rank());
  slices_ = sent_ = got_ = {};
  for (int r = 0; r < ranks; ++r) {
    const size_t b = slice_begin(r), e = slice_begin(r + 1);
    slices_.counts.push_back(static_cast<int>(e - b));
    slices_.displs.push_back(static_cast<int>(b));
    sent_.counts.push_back(static_cast<int>(workers * (e - b)));
    sent_.displs.push_back(static_cast<int>(workers * b));
    got_.counts.push_back(static_cast<int>(workers * len));
    got_.displs.push_back(static_cast<int>(workers * len * r));
  }
  planned_workers_ = workers;
}

// Job worker q G + w is rank q's worker w. Rank r sums slice r of the vector over the job's
// workers in that order, from an all-to-all of the slices, and the sums then gather in place.
Status DenseReducer::Reduce(const std::vector<const float*>& local, float* sum) {
  const int ranks = comm_->size(), me = comm_->rank();
  const size_t workers = local.size();
  // A rank alone adds its workers' vectors where they are: packing them and MPI's copies
  // of the whole vector were a step's serial part on one rank of two workers.
  if (ranks == 1) {
    SumInOrder(local, n_, sum);
    return Status::OK();
  }
  if (n_ * workers > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return Status::InvalidArgument("dense reduction of " + std::to_string(n_ * workers) +
                                   " floats, over MPI's int counts");
  }
  if (workers != planned_workers_) Plan(workers);
  const size_t len = static_cast<size_t>(slices_.counts[me]);
  const float* send = local[0];
  if (workers > 1) {  // part r: slice r of each worker in turn
    packed_.resize(n_ * workers);
    for (int r = 0; r < ranks; ++r) {
      for (size_t w = 0; w < workers; ++w) {
        float* part = packed_.data() + sent_.displs[r] + w * slices_.counts[r];
        std::copy_n(local[w] + slices_.displs[r], slices_.counts[r], part);
      }
    }
    send = packed_.data();
  }
  received_.resize(workers * len * ranks);
  STRATA_RETURN_IF_ERROR(comm_->AllToAllFloats(send, sent_, received_.data(), got_));
  parts_.resize(workers * ranks);
  for (size_t k = 0; k < parts_.size(); ++k) parts_[k] = received_.data() + k * len;
  SumInOrder(parts_, len, sum + slices_.displs[me]);
  STRATA_RETURN_IF_ERROR(comm_->AllGatherFloats(sum, slices_));
  lower_bound_bytes_ += StepLowerBound(ranks, n_);
  return Status::OK();
}

}  // namespace strata
