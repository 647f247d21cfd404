// RecordIndex: linear probing over a power-of-two table of (key, value) entries.
#include "ssd/record_index.h"

#include "strata/common/hash.h"

namespace strata::ssd {

size_t RecordIndex::Probe(uint64_t key) const {
  size_t i = Fmix64(key) & mask_;
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

bool RecordIndex::Find(uint64_t key, uint64_t* value) const {
  if (key == kEmpty) {
    *value = empty_key_value_;
    return has_empty_key_;
  }
  const Entry& e = entries_[Probe(key)];
  if (e.key == kEmpty) return false;
  *value = e.value;
  return true;
}

bool RecordIndex::Upsert(uint64_t key, uint64_t value, uint64_t* old) {
  if (key == kEmpty) {
    const bool had = has_empty_key_;
    *old = empty_key_value_;
    if (!had) ++size_;
    has_empty_key_ = true;
    empty_key_value_ = value;
    return had;
  }
  size_t i = Probe(key);
  if (entries_[i].key == key) {
    *old = entries_[i].value;
    entries_[i].value = value;
    return true;
  }
  if ((size_ + 1) * 5 > entries_.size() * 4) {
    Rehash(entries_.size() * 2);
    i = Probe(key);
  }
  entries_[i] = Entry{key, value};
  ++size_;
  return false;
}

}  // namespace strata::ssd
