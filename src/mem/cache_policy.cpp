// CachePolicy: the key index, the pin sets and lists, the pending pins of absent keys, and
// the two indexed min-heaps of unpinned and pinned rows (see strata/mem/cache_policy.h for
// the order they keep).
#include "strata/mem/cache_policy.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <utility>

namespace strata {

namespace {

constexpr uint32_t kWindowMask = CachePolicy::kPinWindow - 1;
static_assert((CachePolicy::kPinWindow & kWindowMask) == 0, "the pin window is a power of two");
static_assert(CachePolicy::kPinWindow <= 32, "pin sets are 32 bits");

uint32_t Bit(int pass) { return uint32_t{1} << (static_cast<uint32_t>(pass) & kWindowMask); }

}  // namespace

void CachePolicy::PinSet::Add(int pass) {
  assert(pass >= 0);
  assert(bits == 0 || (pass > newest - kPinWindow && FirstAfter(newest - kPinWindow) > pass - kPinWindow));
  bits |= Bit(pass);
  newest = std::max(newest, pass);
}

bool CachePolicy::PinSet::Has(int pass) const {
  return bits != 0 && pass <= newest && pass > newest - kPinWindow && (bits & Bit(pass)) != 0;
}

void CachePolicy::PinSet::Remove(int pass) {
  bits &= ~Bit(pass);
  assert(bits == 0 || pass < newest);  // passes are released oldest first
  if (bits == 0) newest = -1;
}

int CachePolicy::PinSet::FirstAfter(int pass) const {
  if (bits == 0) return kNoUse;
  const int lo = std::max(pass + 1, newest - kPinWindow + 1);
  if (lo > newest) return kNoUse;
  // Rotate bit (lo mod window) down to bit 0, keep the bits of passes lo..newest.
  uint32_t m = std::rotr(bits, static_cast<int>(static_cast<uint32_t>(lo) & kWindowMask));
  const int span = newest - lo + 1;
  if (span < kPinWindow) m &= (uint32_t{1} << span) - 1;
  return m == 0 ? kNoUse : lo + std::countr_zero(m);
}

template <typename F>
void CachePolicy::PinSet::ForEach(F&& f) const {
  for (int p = FirstAfter(newest - kPinWindow); p != kNoUse; p = FirstAfter(p)) f(p);
}

void CachePolicy::BeginPass(int pass) {
  assert(pass >= pass_);
  pass_ = pass;
}

// Past a reservation the entries and the unpinned heap grow by an eighth (Insert), not
// double: a cache a few pinned rows over its capacity should not take twice the memory.
void CachePolicy::Reserve(size_t rows) {
  entries_.reserve(rows);
  heap_.reserve(rows);
  index_.Reserve(rows, EntryKeys());
}

size_t CachePolicy::bytes() const {
  size_t b = entries_.capacity() * sizeof(Entry) + free_.capacity() * sizeof(Handle) + index_.bytes() +
             (heap_.capacity() + pinned_heap_.capacity()) * sizeof(Handle) +
             pending_.capacity() * sizeof(Pending) + pending_free_.capacity() * sizeof(uint32_t) +
             pending_index_.bytes();
  for (const auto& [pass, rows] : pins_) b += rows.capacity() * sizeof(Handle);
  for (const auto& [pass, keys] : pending_keys_) b += keys.capacity() * sizeof(uint64_t);
  return b;
}

CachePolicy::Handle CachePolicy::Find(uint64_t key) const { return index_.Find(key, EntryKeys()); }

CachePolicy::Handle CachePolicy::Insert(uint64_t key) {
  Handle h;
  if (!free_.empty()) {
    h = free_.back();
    free_.pop_back();
  } else {
    h = static_cast<Handle>(entries_.size());
    assert(h != kNone);
    if (entries_.size() == entries_.capacity()) Reserve(entries_.size() + entries_.size() / 8 + 64);
    entries_.emplace_back();
  }
  Entry& e = entries_[h];
  e = Entry{};
  e.key = key;
  e.stamp = NextStamp();
  index_.Insert(key, h, EntryKeys());
  const uint32_t pending = pending_index_.Find(key, PendingKeys());
  if (pending != HandleTable::kNone) {
    e.set_pin_set(pending_[pending].pins);
    pending_[pending].pins.ForEach([&](int p) { pins_[p].push_back(h); });
    ErasePending(pending);
  }
  HeapPush(h);
  return h;
}

void CachePolicy::Touch(Handle h, uint64_t freq) {
  const uint32_t stamp = NextStamp();
  Entry& e = entries_[h];
  e.freq = static_cast<uint32_t>(std::min<uint64_t>(freq, UINT32_MAX));
  e.stamp = stamp;
  e.last_pass = pass_;
  HeapFix(h);
}

// Stamps are 32 bits: when they run out, the cached rows are renumbered 1..n in their
// touch order, which keeps every comparison (and so the heaps) as it was.
uint32_t CachePolicy::NextStamp() {
  if (clock_ >= stamp_limit_) RenumberStamps();
  return ++clock_;
}

void CachePolicy::RenumberStamps() {
  std::vector<Handle> order;
  order.reserve(size());
  index_.ForEach([&](Handle h) { order.push_back(h); });
  std::sort(order.begin(), order.end(), [&](Handle a, Handle b) { return entries_[a].stamp < entries_[b].stamp; });
  clock_ = 0;
  for (Handle h : order) entries_[h].stamp = ++clock_;
}

uint64_t CachePolicy::PassCount(Handle h) const {
  const Entry& e = entries_[h];
  return e.last_pass == pass_ ? e.freq : e.freq + 1;
}

void CachePolicy::Pin(Handle h, int pass) {
  assert(pass > unpinned_through_);
  PinSet pins = entries_[h].pin_set();
  if (pins.Has(pass)) return;
  pins.Add(pass);
  HeapErase(h);
  entries_[h].set_pin_set(pins);
  HeapPush(h);
  pins_[pass].push_back(h);
}

void CachePolicy::PinKey(uint64_t key, int pass) {
  assert(pass > unpinned_through_);
  const Handle h = Find(key);
  if (h != kNone) {
    Pin(h, pass);
  } else {
    PinSet one;
    one.Add(pass);
    AddPending(key, one);
  }
}

void CachePolicy::AddPending(uint64_t key, const PinSet& pins) {
  uint32_t i = pending_index_.Find(key, PendingKeys());
  if (i == HandleTable::kNone) {
    if (pending_free_.empty()) {
      i = static_cast<uint32_t>(pending_.size());
      pending_.emplace_back();
    } else {
      i = pending_free_.back();
      pending_free_.pop_back();
    }
    pending_[i] = Pending{key, PinSet{}};
    pending_index_.Insert(key, i, PendingKeys());
  }
  PinSet& held = pending_[i].pins;
  pins.ForEach([&](int p) {
    if (held.Has(p)) return;
    held.Add(p);
    pending_keys_[p].push_back(key);
  });
}

void CachePolicy::ErasePending(uint32_t i) {
  pending_index_.Erase(pending_[i].key, PendingKeys());
  pending_[i].pins = PinSet{};
  pending_free_.push_back(i);
  if (pending_index_.size() == 0) {  // a pass's worth of announced keys: give the memory back
    std::vector<Pending>().swap(pending_);
    std::vector<uint32_t>().swap(pending_free_);
    pending_index_.Clear();
  }
}

void CachePolicy::UnpinPass(int pass) {
  assert(pass > unpinned_through_);
  unpinned_through_ = pass;
  // Passes below `pass` were unpinned already, so every list here is `pass`'s or later.
  auto it = pins_.find(pass);
  if (it != pins_.end()) {
    for (Handle h : it->second) {
      PinSet pins = entries_[h].pin_set();
      if (!pins.Has(pass)) continue;  // evicted since, or listed twice
      HeapErase(h);
      pins.Remove(pass);
      entries_[h].set_pin_set(pins);
      HeapPush(h);
    }
    pins_.erase(it);
  }
  auto listed = pending_keys_.find(pass);
  if (listed == pending_keys_.end()) return;
  for (uint64_t key : listed->second) {
    const uint32_t i = pending_index_.Find(key, PendingKeys());
    if (i == HandleTable::kNone || !pending_[i].pins.Has(pass)) continue;  // inserted since
    pending_[i].pins.Remove(pass);
    if (pending_[i].pins.bits == 0) ErasePending(i);
  }
  pending_keys_.erase(listed);
}

bool CachePolicy::PopVictim(Victim* out, Pins pins) {
  Handle h = heap_.empty() ? kNone : heap_[0];
  if (pins == Pins::kMayEvict && !pinned_heap_.empty() && (h == kNone || Before(pinned_heap_[0], h))) {
    h = pinned_heap_[0];
  }
  if (h == kNone) return false;
  HeapErase(h);
  Entry& e = entries_[h];
  if (e.pins != 0) AddPending(e.key, e.pin_set());
  e.set_pin_set(PinSet{});
  out->key = e.key;
  out->handle = h;
  index_.Erase(e.key, EntryKeys());
  free_.push_back(h);
  return true;
}

bool CachePolicy::Before(Handle a, Handle b) const {
  const Entry& x = entries_[a];
  const Entry& y = entries_[b];
  const int x_use = NextUse(x), y_use = NextUse(y);
  if (x_use != y_use) return x_use > y_use;
  if (x.freq != y.freq) return x.freq < y.freq;
  return x.stamp > y.stamp;
}

void CachePolicy::HeapPush(Handle h) {
  assert(entries_[h].heap_pos == kNotInHeap);
  std::vector<Handle>& heap = HeapOf(h);
  heap.push_back(h);
  Place(heap, static_cast<uint32_t>(heap.size() - 1), h);
  SiftUp(heap, entries_[h].heap_pos);
}

void CachePolicy::HeapErase(Handle h) {
  std::vector<Handle>& heap = HeapOf(h);
  const uint32_t pos = entries_[h].heap_pos;
  assert(pos != kNotInHeap);
  const Handle last = heap.back();
  heap.pop_back();
  entries_[h].heap_pos = kNotInHeap;
  if (last == h) return;
  Place(heap, pos, last);
  HeapFix(last);
}

void CachePolicy::HeapFix(Handle h) {
  std::vector<Handle>& heap = HeapOf(h);
  SiftUp(heap, entries_[h].heap_pos);
  SiftDown(heap, entries_[h].heap_pos);
}

void CachePolicy::SiftUp(std::vector<Handle>& heap, uint32_t pos) {
  const Handle h = heap[pos];
  while (pos > 0) {
    const uint32_t parent = (pos - 1) / 2;
    if (!Before(h, heap[parent])) break;
    Place(heap, pos, heap[parent]);
    pos = parent;
  }
  Place(heap, pos, h);
}

void CachePolicy::SiftDown(std::vector<Handle>& heap, uint32_t pos) {
  const Handle h = heap[pos];
  const uint32_t n = static_cast<uint32_t>(heap.size());
  for (;;) {
    uint32_t child = 2 * pos + 1;
    if (child >= n) break;
    if (child + 1 < n && Before(heap[child + 1], heap[child])) ++child;
    if (!Before(heap[child], h)) break;
    Place(heap, pos, heap[child]);
    pos = child;
  }
  Place(heap, pos, h);
}

void CachePolicy::Place(std::vector<Handle>& heap, uint32_t pos, Handle h) {
  heap[pos] = h;
  entries_[h].heap_pos = pos;
}

}  // namespace strata
