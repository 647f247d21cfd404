// Admission: the owner's exact, pass-logged counts of keys not yet admitted.
#include "strata/ps/admission.h"

#include <algorithm>
#include <cassert>
#include <unordered_map>

#include "strata/common/hash.h"

namespace strata {

Admission::Admission(int min_count, int unseen_passes)
    : min_count_(min_count), unseen_(unseen_passes), keys_(64), counts_(64, 0), last_(64, 0) {
  assert(min_count >= 1 && min_count <= kMaxAdmitMinCount && unseen_passes >= 0);
}

size_t Admission::Home(uint64_t key) const { return (FibonacciHash(key) >> 16) & (keys_.size() - 1); }

Admission::Entry Admission::Get(uint64_t key) const {
  for (size_t s = Home(key); counts_[s] != 0; s = (s + 1) & (keys_.size() - 1)) {
    if (keys_[s] == key) return Entry{counts_[s], last_[s]};
  }
  return Entry{};
}

void Admission::Set(uint64_t key, Entry e) {
  const size_t mask = keys_.size() - 1;
  size_t s = Home(key);
  while (counts_[s] != 0 && keys_[s] != key) s = (s + 1) & mask;
  if (e.count == 0) {
    if (counts_[s] != 0) EraseAt(s);
    return;
  }
  const bool fresh = counts_[s] == 0;
  keys_[s] = key;
  counts_[s] = e.count;
  last_[s] = e.last;
  if (fresh && ++size_ * 4 > keys_.size() * 3) Grow();
}

// Backward-shift deletion: later entries of the probe run move into the hole when their
// home does not lie cyclically between the hole and them.
void Admission::EraseAt(size_t slot) {
  const size_t mask = keys_.size() - 1;
  --size_;
  size_t hole = slot;
  for (size_t next = (hole + 1) & mask; counts_[next] != 0; next = (next + 1) & mask) {
    const size_t home = Home(keys_[next]);
    const bool stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next);
    if (stays) continue;
    keys_[hole] = keys_[next];
    counts_[hole] = counts_[next];
    last_[hole] = last_[next];
    hole = next;
  }
  counts_[hole] = 0;
}

void Admission::Grow() {
  std::vector<uint64_t> keys(keys_.size() * 2);
  std::vector<uint8_t> counts(keys.size(), 0);
  std::vector<uint32_t> last(keys.size(), 0);
  keys.swap(keys_);
  counts.swap(counts_);
  last.swap(last_);
  size_ = 0;
  for (size_t s = 0; s < keys.size(); ++s) {
    if (counts[s] != 0) Set(keys[s], Entry{counts[s], last[s]});
  }
}

void Admission::Admit(int pass, const uint64_t* keys, const uint32_t* examples, size_t n, uint8_t* admitted) {
  std::lock_guard lock(mu_);
  assert(logs_.empty() || logs_.rbegin()->first <= pass);
  PassLog& log = logs_[pass];
  for (size_t i = 0; i < n; ++i) {
    const Entry before = Get(keys[i]);
    const uint32_t counted = Dead(before, pass - 1) ? 0 : before.count;  // forgotten: from zero
    const uint32_t count = std::min<uint32_t>(kMaxAdmitMinCount, counted + examples[i]);
    log.keys.push_back(keys[i]);
    log.before.push_back(before);
    admitted[i] = count >= static_cast<uint32_t>(min_count_);
    Set(keys[i], admitted[i] ? Entry{} : Entry{static_cast<uint8_t>(count), static_cast<uint32_t>(pass)});
    log.admitted += admitted[i];
    admitted_ += admitted[i];
  }
}

// Freeing a dead entry moves later ones of its run back, maybe into the slot just seen:
// that slot is looked at again.
void Admission::Release(int pass) {
  std::lock_guard lock(mu_);
  logs_.erase(logs_.begin(), logs_.upper_bound(pass));
  if (unseen_ == 0) return;
  for (size_t s = 0; s < keys_.size();) {
    if (counts_[s] != 0 && Dead(Entry{counts_[s], last_[s]}, pass)) {
      EraseAt(s);
    } else {
      ++s;
    }
  }
}

// A key the later passes touched takes its entry from before the first of them; every
// other key is as it stands. Keys dead after `through` are left out.
template <typename Fn>
void Admission::ForEachThrough(int through, Fn&& fn) const {
  std::unordered_map<uint64_t, Entry> undone;
  for (auto it = logs_.upper_bound(through); it != logs_.end(); ++it) {
    for (size_t i = 0; i < it->second.keys.size(); ++i) undone.emplace(it->second.keys[i], it->second.before[i]);
  }
  for (size_t s = 0; s < keys_.size(); ++s) {
    const Entry e{counts_[s], last_[s]};
    if (e.count != 0 && undone.count(keys_[s]) == 0 && !Dead(e, through)) fn(keys_[s], e);
  }
  for (const auto& [key, before] : undone) {
    if (before.count != 0 && !Dead(before, through)) fn(key, before);
  }
}

AdmissionTotals Admission::TotalsThrough(int through) const {
  std::lock_guard lock(mu_);
  AdmissionTotals t;
  t.admitted = admitted_;
  for (auto it = logs_.upper_bound(through); it != logs_.end(); ++it) t.admitted -= it->second.admitted;
  ForEachThrough(through, [&](uint64_t, const Entry&) { ++t.pending; });
  return t;
}

void Admission::Snapshot(int through, std::vector<uint64_t>* keys, std::vector<uint8_t>* counts,
                         std::vector<uint32_t>* last) const {
  std::lock_guard lock(mu_);
  keys->clear();
  counts->clear();
  last->clear();
  ForEachThrough(through, [&](uint64_t key, const Entry& e) {
    keys->push_back(key);
    counts->push_back(e.count);
    last->push_back(e.last);
  });
}

void Admission::Load(const uint64_t* keys, const uint8_t* counts, const uint32_t* last, size_t n) {
  std::lock_guard lock(mu_);
  assert(logs_.empty());
  for (size_t i = 0; i < n; ++i) {
    if (counts[i] != 0) Set(keys[i], Entry{counts[i], last[i]});
  }
}

size_t Admission::bytes() const {
  std::lock_guard lock(mu_);
  return keys_.capacity() * sizeof(uint64_t) + counts_.capacity() + last_.capacity() * sizeof(uint32_t);
}

}  // namespace strata
