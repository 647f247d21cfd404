// ParamExchange and DenseReducer: the per-pass pull, per-step owner-side reduction and
// pass-end push-back of the sharded parameter server, and the fixed-order dense sum.
#include "strata/comm/param_exchange.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "comm/wire.h"
#include "strata/common/partition.h"

namespace strata {
namespace {

// The keys' wire messages to their owners, in the keys' order; position (optional) gets,
// per owner, the index in keys of each key sent there.
std::vector<std::string> KeysByOwner(const std::vector<uint64_t>& keys, int ranks,
                                     std::vector<std::vector<size_t>>* position) {
  std::vector<std::string> send(ranks);
  if (position) position->assign(ranks, {});
  for (size_t i = 0; i < keys.size(); ++i) {
    const int owner = OwnerRank(keys[i], ranks);
    wire::Put(&send[owner], keys[i]);
    if (position) (*position)[owner].push_back(i);
  }
  return send;
}

}  // namespace

Status ParamExchange::Pull(const std::vector<uint64_t>& keys, const RowServer& serve,
                           std::vector<uint8_t>* rows, std::vector<uint8_t>* flags,
                           PassRouting* routing) {
  if (comm_->size() == 1) return PullLocal(keys, serve, rows, flags, routing);
  const int ranks = comm_->size();
  std::vector<std::string> recv;
  std::vector<std::vector<size_t>> position;  // where each sent key's row goes
  STRATA_RETURN_IF_ERROR(comm_->AllToAll(KeysByOwner(keys, ranks, &position), &recv));

  // Owner side: serve every requested key, note subscribers and pick returners.
  std::vector<std::string> reply(ranks);
  if (routing) {
    size_t asked_total = 0;
    for (const std::string& r : recv) asked_total += r.size() / sizeof(uint64_t);
    routing->index_of.Reset(asked_total);
    routing->sub_begin.assign(1, 0);
    routing->sub_ranks.clear();
  }
  std::vector<std::vector<int>> subs;  // per owned key, subscriber ranks in ascending order
  for (int r = 0; r < ranks; ++r) {
    const size_t n = recv[r].size() / sizeof(uint64_t);
    std::vector<uint64_t> asked(n);
    std::memcpy(asked.data(), recv[r].data(), recv[r].size());
    std::vector<uint8_t> served(n * row_bytes_), served_flags(n, 0);
    STRATA_RETURN_IF_ERROR(serve(asked.data(), n, served.data(), served_flags.data()));
    reply[r].reserve(n * (row_bytes_ + 2));
    for (size_t i = 0; i < n; ++i) {
      uint8_t is_returner = 0;
      if (routing) {
        auto [slot, fresh] = routing->index_of.Insert(asked[i]);
        if (fresh) subs.emplace_back();
        is_returner = subs[slot].empty();  // ranks arrive in ascending order
        subs[slot].push_back(r);
      }
      wire::Put(&reply[r], is_returner);
      wire::Put(&reply[r], served_flags[i]);
      wire::PutBytes(&reply[r], &served[i * row_bytes_], row_bytes_);
    }
  }
  if (routing) {
    for (const std::vector<int>& s : subs) {
      routing->sub_ranks.insert(routing->sub_ranks.end(), s.begin(), s.end());
      routing->sub_begin.push_back(static_cast<uint32_t>(routing->sub_ranks.size()));
    }
  }
  STRATA_RETURN_IF_ERROR(comm_->AllToAll(reply, &recv));

  rows->resize(keys.size() * row_bytes_);
  flags->assign(keys.size(), 0);
  if (routing) {
    routing->keys = keys;
    routing->returner.assign(keys.size(), 0);
  }
  for (int r = 0; r < ranks; ++r) {
    wire::Reader in(recv[r]);
    for (size_t i : position[r]) {
      const uint8_t is_returner = in.Get<uint8_t>();
      if (routing) routing->returner[i] = is_returner;
      (*flags)[i] = in.Get<uint8_t>();
      std::memcpy(rows->data() + i * row_bytes_, in.Take(row_bytes_), row_bytes_);
    }
  }
  return Status::OK();
}

Status ParamExchange::Announce(const std::vector<uint64_t>& keys, const KeySink& tell) {
  if (comm_->size() == 1) return tell(keys.data(), keys.size());
  std::vector<std::string> recv;
  STRATA_RETURN_IF_ERROR(comm_->AllToAll(KeysByOwner(keys, comm_->size(), nullptr), &recv));
  for (const std::string& r : recv) {
    std::vector<uint64_t> told(r.size() / sizeof(uint64_t));
    std::memcpy(told.data(), r.data(), r.size());
    STRATA_RETURN_IF_ERROR(tell(told.data(), told.size()));
  }
  return Status::OK();
}

// One rank: every key is local and this rank its only subscriber.
Status ParamExchange::PullLocal(const std::vector<uint64_t>& keys, const RowServer& serve,
                                std::vector<uint8_t>* rows, std::vector<uint8_t>* flags,
                                PassRouting* routing) {
  rows->resize(keys.size() * row_bytes_);
  flags->assign(keys.size(), 0);
  STRATA_RETURN_IF_ERROR(serve(keys.data(), keys.size(), rows->data(), flags->data()));
  if (routing) {
    routing->keys = keys;
    routing->returner.assign(keys.size(), 1);
    routing->index_of.Reset(keys.size());
    for (uint64_t k : keys) routing->index_of.Insert(k);
    routing->sub_begin.resize(keys.size() + 1);
    for (size_t i = 0; i <= keys.size(); ++i) routing->sub_begin[i] = static_cast<uint32_t>(i);
    routing->sub_ranks.assign(keys.size(), 0);
  }
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

Status ParamExchange::ReduceGradients(const PassRouting& routing,
                                      const std::vector<SparseGradView>& workers,
                                      std::vector<uint64_t>* keys, std::vector<float>* grads,
                                      std::vector<uint32_t>* counts) {
  if (comm_->size() == 1) {  // workers in order, no wire format
    size_t total = 0;
    for (const SparseGradView& v : workers) total += v.n;
    BeginSum(total);
    for (const SparseGradView& v : workers) {
      for (size_t i = 0; i < v.n; ++i) AddToSum(v.keys[i], v.counts[i], v.grads + i * dim_);
    }
    keys->swap(sum_keys_);
    counts->swap(sum_counts_);
    grads->swap(sum_grads_);
    return Status::OK();
  }
  const int ranks = comm_->size();
  const size_t grad_bytes = sizeof(float) * static_cast<size_t>(dim_);
  const size_t record = sizeof(uint64_t) + sizeof(uint32_t) + grad_bytes;
  send_.assign(ranks, std::string());
  for (const SparseGradView& v : workers) {
    for (size_t i = 0; i < v.n; ++i) {
      std::string& out = send_[OwnerRank(v.keys[i], ranks)];
      if (out.capacity() < out.size() + record) out.reserve(2 * out.size() + 64 * record);
      wire::Put(&out, v.keys[i]);
      wire::Put(&out, v.counts[i]);
      wire::PutBytes(&out, v.grads + i * dim_, grad_bytes);
    }
  }
  STRATA_RETURN_IF_ERROR(comm_->AllToAll(send_, &recv_));

  // Owner side: ranks in ascending order and workers in order inside each, so every key's
  // contributions are added in global worker order.
  size_t arrived = 0;
  for (const std::string& r : recv_) arrived += r.size() / record;
  BeginSum(arrived);
  for (int r = 0; r < ranks; ++r) {
    wire::Reader in(recv_[r]);
    while (!in.done()) {
      const uint64_t key = in.Get<uint64_t>();
      const uint32_t count = in.Get<uint32_t>();
      AddToSum(key, count, reinterpret_cast<const float*>(in.Take(grad_bytes)));
    }
  }
  send_.assign(ranks, std::string());
  for (size_t s = 0; s < sum_keys_.size(); ++s) {
    const uint32_t slot = routing.index_of.Find(sum_keys_[s]);
    assert(slot != KeyIndex::kNone);
    for (uint32_t j = routing.sub_begin[slot]; j < routing.sub_begin[slot + 1]; ++j) {
      std::string& out = send_[routing.sub_ranks[j]];
      if (out.capacity() < out.size() + record) out.reserve(2 * out.size() + 64 * record);
      wire::Put(&out, sum_keys_[s]);
      wire::Put(&out, sum_counts_[s]);
      wire::PutBytes(&out, &sum_grads_[s * dim_], grad_bytes);
    }
  }
  STRATA_RETURN_IF_ERROR(comm_->AllToAll(send_, &recv_));

  size_t total = 0;
  for (const std::string& r : recv_) total += r.size() / record;
  keys->resize(total);
  counts->resize(total);
  grads->resize(total * dim_);
  size_t at = 0;
  for (int r = 0; r < ranks; ++r) {
    wire::Reader in(recv_[r]);
    for (; !in.done(); ++at) {
      (*keys)[at] = in.Get<uint64_t>();
      (*counts)[at] = in.Get<uint32_t>();
      std::memcpy(grads->data() + at * dim_, in.Take(grad_bytes), grad_bytes);
    }
  }
  return Status::OK();
}

Status ParamExchange::PushBack(const PassRouting& routing, const uint8_t* rows, const RowSink& store) {
  if (comm_->size() == 1) return store(routing.keys.data(), routing.keys.size(), rows);
  const int ranks = comm_->size();
  std::vector<std::string> send(ranks), recv;
  for (size_t i = 0; i < routing.keys.size(); ++i) {
    if (!routing.returner[i]) continue;
    std::string& out = send[OwnerRank(routing.keys[i], ranks)];
    wire::Put(&out, routing.keys[i]);
    wire::PutBytes(&out, rows + i * row_bytes_, row_bytes_);
  }
  STRATA_RETURN_IF_ERROR(comm_->AllToAll(send, &recv));
  for (int r = 0; r < ranks; ++r) {
    const size_t n = recv[r].size() / (sizeof(uint64_t) + row_bytes_);
    std::vector<uint64_t> keys(n);
    std::vector<uint8_t> got(n * row_bytes_);
    wire::Reader in(recv[r]);
    for (size_t i = 0; i < n; ++i) {
      keys[i] = in.Get<uint64_t>();
      std::memcpy(&got[i * row_bytes_], in.Take(row_bytes_), row_bytes_);
    }
    STRATA_RETURN_IF_ERROR(store(keys.data(), n, got.data()));
  }
  return Status::OK();
}

Status DenseReducer::Reduce(const std::vector<const float*>& local, float* sum) {
  const int ranks = comm_->size();
  if (ranks == 1) {  // the same worker-ordered sum, without the wire
    std::copy(local[0], local[0] + n_, sum);
    for (size_t w = 1; w < local.size(); ++w) {
      for (size_t i = 0; i < n_; ++i) sum[i] += local[w][i];
    }
    return Status::OK();
  }
  auto slice_begin = [&](int r) { return n_ * static_cast<size_t>(r) / static_cast<size_t>(ranks); };
  std::vector<std::string> send(ranks), recv;
  for (int r = 0; r < ranks; ++r) {
    const size_t b = slice_begin(r), e = slice_begin(r + 1);
    for (const float* g : local) wire::PutBytes(&send[r], g + b, (e - b) * sizeof(float));
  }
  STRATA_RETURN_IF_ERROR(comm_->AllToAll(send, &recv));
  const size_t b = slice_begin(comm_->rank()), len = slice_begin(comm_->rank() + 1) - b;
  std::vector<float> mine(len);
  bool first = true;
  for (int r = 0; r < ranks; ++r) {
    const float* g = reinterpret_cast<const float*>(recv[r].data());
    const size_t workers = recv[r].size() / (len * sizeof(float) + (len == 0));
    for (size_t w = 0; w < workers && len > 0; ++w, g += len) {
      if (first) std::copy(g, g + len, mine.begin());
      else for (size_t i = 0; i < len; ++i) mine[i] += g[i];
      first = false;
    }
  }
  std::string part(reinterpret_cast<const char*>(mine.data()), len * sizeof(float));
  std::vector<std::string> parts;
  STRATA_RETURN_IF_ERROR(comm_->AllGather(part, &parts));
  for (int r = 0; r < ranks; ++r) std::memcpy(sum + slice_begin(r), parts[r].data(), parts[r].size());
  return Status::OK();
}

}  // namespace strata
