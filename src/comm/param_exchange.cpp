// ParamExchange and DenseReducer: the per-pass pull, per-step owner-side reduction and
// pass-end push-back of the sharded parameter server, and the fixed-order dense sum.
#include "strata/comm/param_exchange.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "strata/comm/wire.h"
#include "strata/common/partition.h"

namespace strata {
namespace {

std::vector<uint64_t> DecodeKeys(const std::string& bytes) {
  std::vector<uint64_t> keys(bytes.size() / sizeof(uint64_t));
  std::memcpy(keys.data(), bytes.data(), keys.size() * sizeof(uint64_t));
  return keys;
}

// Appends a (key, count, grad) record, growing the buffer geometrically.
void PutGradRecord(std::string* out, uint64_t key, uint32_t count, const float* grad, size_t grad_bytes) {
  const size_t record = sizeof(key) + sizeof(count) + grad_bytes;
  if (out->capacity() < out->size() + record) out->reserve(2 * out->size() + 64 * record);
  wire::Put(out, key);
  wire::Put(out, count);
  wire::PutBytes(out, grad, grad_bytes);
}

}  // namespace

ParamExchange::ParamExchange(Comm* comm, ShardServer* server)
    : comm_(comm), server_(server), row_bytes_(server->row_bytes()), dim_(server->dim()) {}

Status ParamExchange::KeysToOwners(const std::vector<uint64_t>& keys, std::vector<std::vector<uint64_t>>* asked,
                                   std::vector<std::vector<size_t>>* position) {
  const int ranks = comm_->size();
  std::vector<std::string> send(ranks), recv;
  if (position) position->assign(ranks, {});
  for (size_t i = 0; i < keys.size(); ++i) {
    const int owner = OwnerRank(keys[i], ranks);
    wire::Put(&send[owner], keys[i]);
    if (position) (*position)[owner].push_back(i);
  }
  STRATA_RETURN_IF_ERROR(comm_->AllToAll(std::move(send), &recv));
  asked->clear();
  for (const std::string& r : recv) asked->push_back(DecodeKeys(r));
  return Status::OK();
}

Status ParamExchange::Announce(int pass, const std::vector<uint64_t>& keys) {
  std::vector<std::vector<uint64_t>> asked;
  STRATA_RETURN_IF_ERROR(KeysToOwners(keys, &asked, nullptr));
  for (const std::vector<uint64_t>& told : asked) {
    STRATA_RETURN_IF_ERROR(server_->Announce(pass, told.data(), told.size()));
  }
  return Status::OK();
}

// Owner side of a pull: serve every requested key, note its subscribers (ranks arrive in
// ascending order, so the first is the lowest: the returner), and hold the pass. Each
// reply is n (returner, held) byte pairs, then the n rows, served straight into it.
Status ParamExchange::ServePull(int pass, const std::vector<std::vector<uint64_t>>& asked, PassRouting* routing,
                                std::vector<std::string>* reply) {
  size_t asked_total = 0;
  for (const auto& a : asked) asked_total += a.size();
  auto owned = std::make_shared<KeyIndex>();
  owned->Reset(asked_total);
  std::vector<std::vector<int>> subs;  // per owned key, subscriber ranks in ascending order
  reply->assign(asked.size(), std::string());
  Status local;
  for (size_t r = 0; r < asked.size(); ++r) {
    const size_t n = asked[r].size();
    (*reply)[r].resize(n * (2 + row_bytes_));
    auto* pairs = reinterpret_cast<uint8_t*>((*reply)[r].data());
    std::vector<uint8_t> held(n, 0);
    if (local.ok()) local = server_->Pull(pass, asked[r].data(), n, pairs + 2 * n, held.data());
    for (size_t i = 0; i < n; ++i) {
      auto [slot, fresh] = owned->Insert(asked[r][i]);
      if (fresh) subs.emplace_back();
      pairs[2 * i] = subs[slot].empty();
      pairs[2 * i + 1] = held[i];
      subs[slot].push_back(static_cast<int>(r));
    }
  }
  routing->sub_begin_.assign(1, 0);
  routing->sub_ranks_.clear();
  for (const std::vector<int>& s : subs) {
    routing->sub_ranks_.insert(routing->sub_ranks_.end(), s.begin(), s.end());
    routing->sub_begin_.push_back(static_cast<uint32_t>(routing->sub_ranks_.size()));
  }
  routing->owned_ = owned;
  if (local.ok()) server_->Hold(pass, std::move(owned));
  return local;
}

Status ParamExchange::Pull(int pass, std::vector<uint64_t> keys, std::vector<uint8_t>* rows,
                           std::vector<uint8_t>* held, PassRouting* routing) {
  std::vector<std::vector<uint64_t>> asked;
  std::vector<std::vector<size_t>> position;  // where each sent key's row goes
  STRATA_RETURN_IF_ERROR(KeysToOwners(keys, &asked, &position));
  std::vector<std::string> reply, recv;
  const Status served = ServePull(pass, asked, routing, &reply);
  asked.clear();
  STRATA_RETURN_IF_ERROR(comm_->AllToAll(std::move(reply), &recv));
  STRATA_RETURN_IF_ERROR(served);

  routing->pass_ = pass;
  routing->returner_.assign(keys.size(), 0);
  rows->resize(keys.size() * row_bytes_);
  held->assign(keys.size(), 0);
  for (size_t r = 0; r < recv.size(); ++r) {
    const auto* pairs = reinterpret_cast<const uint8_t*>(recv[r].data());
    const uint8_t* served_rows = pairs + 2 * position[r].size();
    for (size_t j = 0; j < position[r].size(); ++j) {
      const size_t i = position[r][j];
      routing->returner_[i] = pairs[2 * j];
      (*held)[i] = pairs[2 * j + 1];
      std::memcpy(rows->data() + i * row_bytes_, served_rows + j * row_bytes_, row_bytes_);
    }
    std::string().swap(recv[r]);
  }
  routing->keys_ = std::move(keys);
  return Status::OK();
}

Status ParamExchange::PullReadOnly(const std::vector<uint64_t>& keys, std::vector<uint8_t>* rows) {
  std::vector<std::vector<uint64_t>> asked;
  std::vector<std::vector<size_t>> position;
  STRATA_RETURN_IF_ERROR(KeysToOwners(keys, &asked, &position));
  std::vector<std::string> reply(asked.size()), recv;
  Status local;
  for (size_t r = 0; r < asked.size(); ++r) {
    reply[r].resize(asked[r].size() * row_bytes_);
    if (local.ok()) {
      local = server_->PullReadOnly(asked[r].data(), asked[r].size(), reinterpret_cast<uint8_t*>(reply[r].data()));
    }
  }
  STRATA_RETURN_IF_ERROR(comm_->AllToAll(std::move(reply), &recv));
  STRATA_RETURN_IF_ERROR(local);
  rows->resize(keys.size() * row_bytes_);
  for (size_t r = 0; r < recv.size(); ++r) {
    for (size_t j = 0; j < position[r].size(); ++j) {
      std::memcpy(rows->data() + position[r][j] * row_bytes_, recv[r].data() + j * row_bytes_, row_bytes_);
    }
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

// Owner side: each summed key goes to every rank that subscribed to it this pass.
void ParamExchange::SendSums(const PassRouting& routing) {
  const size_t grad_bytes = sizeof(float) * static_cast<size_t>(dim_);
  send_.assign(comm_->size(), std::string());
  for (size_t s = 0; s < sum_keys_.size(); ++s) {
    const uint32_t slot = routing.owned_->Find(sum_keys_[s]);
    assert(slot != KeyIndex::kNone);
    for (uint32_t j = routing.sub_begin_[slot]; j < routing.sub_begin_[slot + 1]; ++j) {
      PutGradRecord(&send_[routing.sub_ranks_[j]], sum_keys_[s], sum_counts_[s], &sum_grads_[s * dim_], grad_bytes);
    }
  }
}

Status ParamExchange::ReduceGradients(const PassRouting& routing, const std::vector<SparseGradView>& workers,
                                      std::vector<uint64_t>* keys, std::vector<float>* grads,
                                      std::vector<uint32_t>* counts) {
  const int ranks = comm_->size();
  const size_t grad_bytes = sizeof(float) * static_cast<size_t>(dim_);
  const size_t record = sizeof(uint64_t) + sizeof(uint32_t) + grad_bytes;
  send_.assign(ranks, std::string());
  for (const SparseGradView& v : workers) {
    for (size_t i = 0; i < v.n; ++i) {
      PutGradRecord(&send_[OwnerRank(v.keys[i], ranks)], v.keys[i], v.counts[i], v.grads + i * dim_, grad_bytes);
    }
  }
  STRATA_RETURN_IF_ERROR(comm_->AllToAll(std::move(send_), &recv_));

  // Ranks in ascending order and workers in order inside each, so every key's
  // contributions are added in global worker order.
  size_t arrived = 0;
  for (const std::string& r : recv_) arrived += r.size() / record;
  BeginSum(arrived);
  for (const std::string& r : recv_) {
    for (wire::Reader in(r); !in.done();) {
      const uint64_t key = in.Get<uint64_t>();
      const uint32_t count = in.Get<uint32_t>();
      AddToSum(key, count, reinterpret_cast<const float*>(in.Take(grad_bytes)));
    }
  }
  SendSums(routing);
  STRATA_RETURN_IF_ERROR(comm_->AllToAll(std::move(send_), &recv_));

  size_t total = 0;
  for (const std::string& r : recv_) total += r.size() / record;
  keys->resize(total);
  counts->resize(total);
  grads->resize(total * dim_);
  size_t at = 0;
  for (const std::string& r : recv_) {
    for (wire::Reader in(r); !in.done(); ++at) {
      (*keys)[at] = in.Get<uint64_t>();
      (*counts)[at] = in.Get<uint32_t>();
      std::memcpy(grads->data() + at * dim_, in.Take(grad_bytes), grad_bytes);
    }
  }
  return Status::OK();
}

// On the wire each owner's part is its keys, then their rows, so the owner stores
// straight from the received bytes.
Status ParamExchange::PushBack(const PassRouting& routing, std::vector<uint8_t>* rows) {
  const int ranks = comm_->size();
  std::vector<std::vector<size_t>> home(ranks);
  for (size_t i = 0; i < routing.keys_.size(); ++i) {
    if (routing.returner_[i]) home[OwnerRank(routing.keys_[i], ranks)].push_back(i);
  }
  std::vector<std::string> send(ranks), recv;
  for (int r = 0; r < ranks; ++r) {
    send[r].reserve(home[r].size() * (sizeof(uint64_t) + row_bytes_));
    for (size_t i : home[r]) wire::Put(&send[r], routing.keys_[i]);
    for (size_t i : home[r]) wire::PutBytes(&send[r], rows->data() + i * row_bytes_, row_bytes_);
  }
  std::vector<uint8_t>().swap(*rows);
  STRATA_RETURN_IF_ERROR(comm_->AllToAll(std::move(send), &recv));
  Status local;
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

Status DenseReducer::Reduce(const std::vector<const float*>& local, float* sum) {
  const int ranks = comm_->size();
  auto slice_begin = [&](int r) { return n_ * static_cast<size_t>(r) / static_cast<size_t>(ranks); };
  std::vector<std::string> send(ranks), recv;
  for (int r = 0; r < ranks; ++r) {
    const size_t b = slice_begin(r), e = slice_begin(r + 1);
    for (const float* g : local) wire::PutBytes(&send[r], g + b, (e - b) * sizeof(float));
  }
  STRATA_RETURN_IF_ERROR(comm_->AllToAll(std::move(send), &recv));
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
