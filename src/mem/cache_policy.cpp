// CachePolicy: the hash index, the pin lists and the indexed min-heap of eviction
// candidates (see strata/mem/cache_policy.h for the order it keeps).
#include "strata/mem/cache_policy.h"

#include <cassert>
#include <utility>

namespace strata {

void CachePolicy::BeginPass(int pass) {
  assert(pass >= pass_);
  pass_ = pass;
}

CachePolicy::Handle CachePolicy::Find(uint64_t key) const {
  auto it = index_.find(key);
  return it == index_.end() ? kNone : it->second;
}

CachePolicy::Handle CachePolicy::Insert(uint64_t key, uint32_t payload) {
  Handle h;
  if (!free_.empty()) {
    h = free_.back();
    free_.pop_back();
  } else {
    h = static_cast<Handle>(entries_.size());
    assert(h != kNone);
    entries_.emplace_back();
  }
  entries_[h] = Entry{};
  entries_[h].key = key;
  entries_[h].payload = payload;
  entries_[h].stamp = ++clock_;
  [[maybe_unused]] bool inserted = index_.emplace(key, h).second;
  assert(inserted);
  HeapPush(h);
  return h;
}

void CachePolicy::Touch(Handle h, uint64_t freq) {
  Entry& e = entries_[h];
  e.freq = freq;
  e.stamp = ++clock_;
  e.last_pass = pass_;
  if (e.heap_pos != kNotInHeap) HeapFix(h);
}

uint64_t CachePolicy::PassCount(Handle h) const {
  const Entry& e = entries_[h];
  return e.last_pass == pass_ ? e.freq : e.freq + 1;
}

void CachePolicy::Pin(Handle h, int pass) {
  assert(pass > unpinned_through_);
  Entry& e = entries_[h];
  if (e.pin_pass == kUnpinned) {
    HeapErase(h);
    e.pin_pass = pass;
  } else if (pass > e.pin_pass) {
    e.pin_pass = pass;
  }
  pins_[pass].push_back(h);
}

void CachePolicy::UnpinPass(int pass) {
  assert(pass > unpinned_through_);
  unpinned_through_ = pass;
  // Passes below `pass` were unpinned already, so every list here is `pass`'s or later.
  auto it = pins_.find(pass);
  if (it == pins_.end()) return;
  for (Handle h : it->second) {
    Entry& e = entries_[h];
    if (e.pin_pass != pass) continue;  // pinned for a later pass too, or released already
    e.pin_pass = kUnpinned;
    HeapPush(h);
  }
  pins_.erase(it);
}

bool CachePolicy::PopVictim(Victim* out) {
  if (heap_.empty()) return false;
  Handle h = heap_[0];
  HeapErase(h);
  Entry& e = entries_[h];
  out->key = e.key;
  out->payload = e.payload;
  index_.erase(e.key);
  free_.push_back(h);
  return true;
}

bool CachePolicy::Before(Handle a, Handle b) const {
  const Entry& x = entries_[a];
  const Entry& y = entries_[b];
  if (x.freq != y.freq) return x.freq < y.freq;
  return x.stamp > y.stamp;
}

void CachePolicy::HeapPush(Handle h) {
  assert(entries_[h].heap_pos == kNotInHeap);
  heap_.push_back(h);
  Place(static_cast<uint32_t>(heap_.size() - 1), h);
  SiftUp(entries_[h].heap_pos);
}

void CachePolicy::HeapErase(Handle h) {
  uint32_t pos = entries_[h].heap_pos;
  assert(pos != kNotInHeap);
  Handle last = heap_.back();
  heap_.pop_back();
  entries_[h].heap_pos = kNotInHeap;
  if (last == h) return;
  Place(pos, last);
  HeapFix(last);
}

void CachePolicy::HeapFix(Handle h) {
  SiftUp(entries_[h].heap_pos);
  SiftDown(entries_[h].heap_pos);
}

void CachePolicy::SiftUp(uint32_t pos) {
  Handle h = heap_[pos];
  while (pos > 0) {
    uint32_t parent = (pos - 1) / 2;
    if (!Before(h, heap_[parent])) break;
    Place(pos, heap_[parent]);
    pos = parent;
  }
  Place(pos, h);
}

void CachePolicy::SiftDown(uint32_t pos) {
  Handle h = heap_[pos];
  const uint32_t n = static_cast<uint32_t>(heap_.size());
  for (;;) {
    uint32_t child = 2 * pos + 1;
    if (child >= n) break;
    if (child + 1 < n && Before(heap_[child + 1], heap_[child])) ++child;
    if (!Before(heap_[child], h)) break;
    Place(pos, heap_[child]);
    pos = child;
  }
  Place(pos, h);
}

void CachePolicy::Place(uint32_t pos, Handle h) {
  heap_[pos] = h;
  entries_[h].heap_pos = pos;
}

}  // namespace strata
