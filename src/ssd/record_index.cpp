// RecordIndex: linear probing over a power-of-two table of (key, location) entries.
#include "ssd/record_index.h"

namespace strata::ssd {
namespace {

inline uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

}  // namespace

size_t RecordIndex::Probe(uint64_t key) const {
  size_t i = Mix(key) & mask_;
  while (entries_[i].key != key && entries_[i].key != kEmpty) i = (i + 1) & mask_;
  return i;
}

void RecordIndex::Rehash(size_t capacity) {
  std::vector<Entry> old = std::move(entries_);
  entries_.assign(capacity, Entry{kEmpty, 0});
  mask_ = capacity - 1;
  for (const Entry& e : old) {
    if (e.key != kEmpty) entries_[Probe(e.key)] = e;
  }
}

bool RecordIndex::Find(uint64_t key, uint64_t* loc) const {
  if (key == kEmpty) {
    *loc = empty_key_loc_;
    return has_empty_key_;
  }
  const Entry& e = entries_[Probe(key)];
  if (e.key == kEmpty) return false;
  *loc = e.loc;
  return true;
}

bool RecordIndex::Upsert(uint64_t key, uint64_t loc, uint64_t* old) {
  if (key == kEmpty) {
    const bool had = has_empty_key_;
    *old = empty_key_loc_;
    if (!had) ++size_;
    has_empty_key_ = true;
    empty_key_loc_ = loc;
    return had;
  }
  size_t i = Probe(key);
  if (entries_[i].key == key) {
    *old = entries_[i].loc;
    entries_[i].loc = loc;
    return true;
  }
  if ((size_ + 1) * 5 > entries_.size() * 4) {
    Rehash(entries_.size() * 2);
    i = Probe(key);
  }
  entries_[i] = Entry{key, loc};
  ++size_;
  return false;
}

bool RecordIndex::ReplaceIf(uint64_t key, uint64_t from, uint64_t to) {
  if (key == kEmpty) {
    if (!has_empty_key_ || empty_key_loc_ != from) return false;
    empty_key_loc_ = to;
    return true;
  }
  Entry& e = entries_[Probe(key)];
  if (e.key != key || e.loc != from) return false;
  e.loc = to;
  return true;
}

void RecordIndex::ForEach(const std::function<void(uint64_t key, uint64_t loc)>& fn) const {
  if (has_empty_key_) fn(kEmpty, empty_key_loc_);
  for (const Entry& e : entries_) {
    if (e.key != kEmpty) fn(e.key, e.loc);
  }
}

}  // namespace strata::ssd
