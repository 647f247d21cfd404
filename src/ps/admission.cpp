// Admission: the owner's exact, pass-logged counts of keys not yet admitted.
#include "strata/ps/admission.h"

#include <algorithm>
#include <cassert>
#include <unordered_map>

#include "strata/common/hash.h"

namespace strata {

Admission::Admission(int min_count) : min_count_(min_count), keys_(64), counts_(64, 0) {
  assert(min_count >= 1 && min_count <= kMaxAdmitMinCount);
}

size_t Admission::Home(uint64_t key) const { return (FibonacciHash(key) >> 16) & (keys_.size() - 1); }

uint8_t Admission::Get(uint64_t key) const {
  for (size_t s = Home(key); counts_[s] != 0; s = (s + 1) & (keys_.size() - 1)) {
    if (keys_[s] == key) return counts_[s];
  }
  return 0;
}

void Admission::Set(uint64_t key, uint8_t count) {
  const size_t mask = keys_.size() - 1;
  size_t s = Home(key);
  while (counts_[s] != 0 && keys_[s] != key) s = (s + 1) & mask;
  if (count != 0) {
    if (counts_[s] == 0) {
      keys_[s] = key;
      if (++size_ * 4 > keys_.size() * 3) {
        counts_[s] = count;
        Grow();
        return;
      }
    }
    counts_[s] = count;
    return;
  }
  if (counts_[s] == 0) return;
  // Backward-shift deletion: later entries of the probe run move into the hole when their
  // home does not lie cyclically between the hole and them.
  --size_;
  size_t hole = s;
  for (size_t next = (hole + 1) & mask; counts_[next] != 0; next = (next + 1) & mask) {
    const size_t home = Home(keys_[next]);
    const bool stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next);
    if (stays) continue;
    keys_[hole] = keys_[next];
    counts_[hole] = counts_[next];
    hole = next;
  }
  counts_[hole] = 0;
}

void Admission::Grow() {
  std::vector<uint64_t> keys(keys_.size() * 2);
  std::vector<uint8_t> counts(keys.size(), 0);
  keys.swap(keys_);
  counts.swap(counts_);
  size_ = 0;
  for (size_t s = 0; s < keys.size(); ++s) {
    if (counts[s] != 0) Set(keys[s], counts[s]);
  }
}

void Admission::Admit(int pass, const uint64_t* keys, const uint32_t* examples, size_t n, uint8_t* admitted) {
  std::lock_guard lock(mu_);
  assert(logs_.empty() || logs_.rbegin()->first <= pass);
  PassLog& log = logs_[pass];
  for (size_t i = 0; i < n; ++i) {
    const uint8_t before = Get(keys[i]);
    const uint32_t count = std::min<uint32_t>(kMaxAdmitMinCount, before + examples[i]);
    log.keys.push_back(keys[i]);
    log.before.push_back(before);
    admitted[i] = count >= static_cast<uint32_t>(min_count_);
    Set(keys[i], admitted[i] ? 0 : static_cast<uint8_t>(count));
    const int64_t pending_change = admitted[i] ? -(before != 0) : (before == 0);
    log.admitted += admitted[i];
    log.pending_change += pending_change;
    live_.admitted += admitted[i];
    live_.pending += pending_change;
  }
}

void Admission::Release(int pass) {
  std::lock_guard lock(mu_);
  logs_.erase(logs_.begin(), logs_.upper_bound(pass));
}

AdmissionTotals Admission::TotalsLocked(int through) const {
  AdmissionTotals t = live_;
  for (auto it = logs_.upper_bound(through); it != logs_.end(); ++it) {
    t.admitted -= it->second.admitted;
    t.pending -= it->second.pending_change;
  }
  return t;
}

AdmissionTotals Admission::TotalsThrough(int through) const {
  std::lock_guard lock(mu_);
  return TotalsLocked(through);
}

// A key the later passes touched takes its count from before the first of them; every
// other key is as it stands.
void Admission::Snapshot(int through, std::vector<uint64_t>* keys, std::vector<uint8_t>* counts) const {
  std::lock_guard lock(mu_);
  std::unordered_map<uint64_t, uint8_t> undone;
  for (auto it = logs_.upper_bound(through); it != logs_.end(); ++it) {
    for (size_t i = 0; i < it->second.keys.size(); ++i) undone.emplace(it->second.keys[i], it->second.before[i]);
  }
  keys->clear();
  counts->clear();
  keys->reserve(static_cast<size_t>(TotalsLocked(through).pending));
  counts->reserve(keys->capacity());
  auto add = [&](uint64_t key, uint8_t count) {
    keys->push_back(key);
    counts->push_back(count);
  };
  for (size_t s = 0; s < keys_.size(); ++s) {
    if (counts_[s] != 0 && undone.count(keys_[s]) == 0) add(keys_[s], counts_[s]);
  }
  for (const auto& [key, before] : undone) {
    if (before != 0) add(key, before);
  }
}

void Admission::Load(const uint64_t* keys, const uint8_t* counts, size_t n) {
  std::lock_guard lock(mu_);
  assert(logs_.empty());
  for (size_t i = 0; i < n; ++i) {
    if (counts[i] == 0) continue;
    live_.pending += Get(keys[i]) == 0;
    Set(keys[i], counts[i]);
  }
}

size_t Admission::bytes() const {
  std::lock_guard lock(mu_);
  return keys_.capacity() * sizeof(uint64_t) + counts_.capacity();
}

}  // namespace strata
