// CachePolicy: the key index, the entries and their pin bits, the per-pass filters of
// keys pinned while absent, and the eviction order computed by sweeps (see
// strata/mem/cache_policy.h for the order it keeps).
#include "strata/mem/cache_policy.h"

#include <algorithm>
#include <bit>
#include <cassert>

#include "strata/common/prefetch.h"

namespace strata {

namespace {

constexpr uint32_t kWindowMask = CachePolicy::kPinWindow - 1;
static_assert((CachePolicy::kPinWindow & kWindowMask) == 0, "the pin window is a power of two");
static_assert(CachePolicy::kPinWindow <= 32, "pin sets are 32 bits");

// PopVictim keeps this share (1 / n) of a sweep's rows, and at least kMinSwept of them.
constexpr size_t kSweptShare = 8;
constexpr size_t kMinSwept = 256;
// About 0.2% false positives in the filters of keys pinned while not cached.
constexpr int kAbsentPinBitsPerKey = 14;

uint32_t Bit(int pass) { return uint32_t{1} << (static_cast<uint32_t>(pass) & kWindowMask); }

}  // namespace

// Past a reservation the entries grow by an eighth (Insert), not double: a cache a few
// pinned rows over its capacity should not take twice the memory.
void CachePolicy::Reserve(size_t rows) {
  keys_.reserve(rows);
  meta_.reserve(rows);
  index_.Reserve(rows, Keys());
}

size_t CachePolicy::bytes() const {
  size_t b = keys_.capacity() * sizeof(uint64_t) + meta_.capacity() * sizeof(Meta) +
             free_.capacity() * sizeof(Handle) + index_.bytes() + (swept_.capacity() + changed_.capacity()) * sizeof(Rank);
  for (const auto& [pass, filter] : absent_pins_) b += filter.memory_bytes();
  return b;
}

void CachePolicy::BeginPass(int pass) {
  assert(pass >= pass_);
  if (pass == pass_) return;
  pass_ = pass;
  pass_first_stamp_ = clock_ + 1;
  pass_stamps_.emplace_back(pass, pass_first_stamp_);
}

CachePolicy::Handle CachePolicy::Find(uint64_t key) const { return index_.Find(key, Keys()); }

void CachePolicy::Prefetch(uint64_t key) const {
  index_.Prefetch(key);
  for (const auto& [pass, filter] : absent_pins_) filter.Prefetch(key);
}

CachePolicy::Handle CachePolicy::Insert(uint64_t key) { return InsertWithPins(key, AbsentPinsOf(key)); }

CachePolicy::Handle CachePolicy::InsertPinned(uint64_t key) {
  const uint32_t pins = AbsentPinsOf(key);
  return pins != 0 ? InsertWithPins(key, pins) : kNone;
}

uint32_t CachePolicy::AbsentPinsOf(uint64_t key) const {
  uint32_t pins = 0;
  for (const auto& [pass, filter] : absent_pins_) {
    if (filter.MayContain(key)) pins |= Bit(pass);
  }
  return pins;
}

CachePolicy::Handle CachePolicy::InsertWithPins(uint64_t key, uint32_t pins) {
  Handle h;
  if (!free_.empty()) {
    h = free_.back();
    free_.pop_back();
  } else {
    h = static_cast<Handle>(keys_.size());
    assert(h != kNone);
    if (keys_.size() == keys_.capacity()) Reserve(keys_.size() + keys_.size() / 8 + 64);
    keys_.push_back(key);
    meta_.emplace_back();
  }
  keys_[h] = key;
  meta_[h] = Meta{};
  meta_[h].pins = pins;
  index_.Insert(key, h, Keys());
  pinned_rows_ += pins != 0 ? 1 : 0;
  Changed(h);
  return h;
}

void CachePolicy::Touch(Handle h, uint64_t freq) {
  const uint32_t stamp = NextStamp();
  meta_[h].freq = static_cast<uint32_t>(std::min<uint64_t>(freq, UINT32_MAX));
  meta_[h].stamp = stamp;
  Changed(h);
}

// Stamps are 32 bits: when they run out, the cached rows are renumbered 1..n in their
// touch order, and the passes' first stamps with them, which keeps every comparison.
uint32_t CachePolicy::NextStamp() {
  if (clock_ >= stamp_limit_) RenumberStamps();
  return ++clock_;
}

void CachePolicy::RenumberStamps() {
  std::vector<Handle> order;
  order.reserve(size());
  index_.ForEach([&](Handle h) {
    if (meta_[h].stamp != kUntouched) order.push_back(h);
  });
  std::sort(order.begin(), order.end(), [&](Handle a, Handle b) { return meta_[a].stamp < meta_[b].stamp; });
  // A pass's first stamp becomes 1 + the rows touched before it.
  auto renumbered = [&](uint32_t first) {
    const auto it = std::lower_bound(order.begin(), order.end(), first,
                                     [&](Handle h, uint32_t s) { return meta_[h].stamp < s; });
    return static_cast<uint32_t>(it - order.begin()) + 1;
  };
  for (auto& [pass, first] : pass_stamps_) first = renumbered(first);
  pass_first_stamp_ = renumbered(pass_first_stamp_);
  clock_ = 0;
  for (Handle h : order) meta_[h].stamp = ++clock_;
  sweep_valid_ = false;
}

uint64_t CachePolicy::PassCount(Handle h) const {
  const Meta& m = meta_[h];
  const bool this_pass = m.stamp != kUntouched && m.stamp >= pass_first_stamp_;
  return this_pass ? m.freq : uint64_t{m.freq} + 1;
}

void CachePolicy::Pin(Handle h, int pass) {
  assert(pass > unpinned_through_);
  NotePinnedPass(pass);
  Meta& m = meta_[h];
  if (m.pins & Bit(pass)) return;
  pinned_rows_ += m.pins == 0 ? 1 : 0;
  m.pins |= Bit(pass);
  Changed(h);
}

void CachePolicy::PinKey(uint64_t key, int pass) {
  assert(pass > unpinned_through_);
  const Handle h = Find(key);
  if (h != kNone) {
    Pin(h, pass);
  } else {
    NotePinnedPass(pass);
    AbsentPins(pass).Add(key);
  }
}

void CachePolicy::NotePinnedPass(int pass) {
  if (pinned_passes_.empty() || pass > pinned_passes_.back()) {
    pinned_passes_.push_back(pass);
  } else {
    const auto it = std::lower_bound(pinned_passes_.begin(), pinned_passes_.end(), pass);
    if (*it != pass) pinned_passes_.insert(it, pass);
  }
  assert(pinned_passes_.back() - pinned_passes_.front() < kPinWindow);
}

BloomFilter& CachePolicy::AbsentPins(int pass) {
  auto it = std::lower_bound(absent_pins_.begin(), absent_pins_.end(), pass,
                             [](const auto& entry, int p) { return entry.first < p; });
  if (it == absent_pins_.end() || it->first != pass) {
    it = absent_pins_.emplace(it, pass, BloomFilter(absent_hint_, kAbsentPinBitsPerKey));
  }
  return it->second;
}

// One sweep over the entries clears the released passes' bits; their filters of absent keys go.
void CachePolicy::UnpinPass(int pass) {
  assert(pass > unpinned_through_);
  unpinned_through_ = pass;
  uint32_t released = 0;
  while (!pinned_passes_.empty() && pinned_passes_.front() <= pass) {
    released |= Bit(pinned_passes_.front());
    pinned_passes_.erase(pinned_passes_.begin());
  }
  while (pass_stamps_.size() > 1 && pass_stamps_.front().first <= pass) pass_stamps_.erase(pass_stamps_.begin());
  while (!absent_pins_.empty() && absent_pins_.front().first <= pass) {
    absent_hint_ = std::max(absent_hint_, absent_pins_.front().second.keys_added());
    absent_pins_.erase(absent_pins_.begin());
  }
  sweep_valid_ = false;
  if (released == 0) return;
  for (Meta& m : meta_) {
    if (!(m.pins & released)) continue;
    m.pins &= ~released;
    pinned_rows_ -= m.pins == 0 ? 1 : 0;
  }
}

// The first stamp of the first pass begun at or after `pass`. REQUIRES:
// unpinned_through_ < pass <= pass_.
uint32_t CachePolicy::FirstStamp(int pass) const {
  for (const auto& [p, first] : pass_stamps_) {
    if (p >= pass) return first;
  }
  assert(false && "pass not begun");
  return kFreeStamp;
}

// True when a row last touched at `stamp` was touched in `pass` or later.
bool CachePolicy::TouchedSince(uint32_t stamp, int pass) const {
  if (stamp == kUntouched || pass > pass_) return false;
  return stamp >= FirstStamp(pass);
}

// Pin bits name passes within the window that starts at the oldest pass still pinned.
template <typename F>
int CachePolicy::FindPinnedPass(uint32_t pins, F&& found) const {
  if (pins == 0) return kNoUse;
  const int base = pinned_passes_.front();
  for (uint32_t bits = std::rotr(pins, static_cast<int>(static_cast<uint32_t>(base) & kWindowMask)); bits != 0;
       bits &= bits - 1) {
    const int pass = base + std::countr_zero(bits);
    if (found(pass)) return pass;
  }
  return kNoUse;
}

// The first pass the row is pinned for after the pass of its last touch, or kNoUse.
int CachePolicy::NextUse(const Meta& m) const {
  return FindPinnedPass(m.pins, [&](int pass) { return !TouchedSince(m.stamp, pass); });
}

CachePolicy::Rank CachePolicy::RankOf(Handle h) const {
  const Meta& m = meta_[h];
  return Rank{uint64_t(uint32_t(NextUse(m))) << 32 | uint32_t(~m.freq), uint64_t{m.stamp} << 32 | h};
}

// Keeps PopVictim's order exact: a changed row's new rank goes into the heap.
void CachePolicy::Changed(Handle h) {
  if (!sweep_valid_ || !MayEvict(h, sweep_pins_)) return;
  if (changed_.size() >= std::max(kMinSwept, size() / kSweptShare)) {  // cheaper to sweep again
    sweep_valid_ = false;
    return;
  }
  changed_.push_back(RankOf(h));
  std::push_heap(changed_.begin(), changed_.end());
}

// Ranks every row `pins` lets go; keeps the best share of them, best last.
void CachePolicy::Sweep(Pins pins) {
  swept_.clear();
  changed_.clear();
  for (Handle h = 0; h < meta_.size(); ++h) {  // in handle order: a sequential read
    if (MayEvict(h, pins)) swept_.push_back(RankOf(h));
  }
  const size_t keep = std::max(kMinSwept, size() / kSweptShare);
  sweep_whole_ = swept_.size() <= keep;
  if (!sweep_whole_) {
    std::nth_element(swept_.begin(), swept_.begin() + static_cast<std::ptrdiff_t>(keep), swept_.end(),
                     [](const Rank& a, const Rank& b) { return b < a; });
    swept_.resize(keep);
  }
  std::sort(swept_.begin(), swept_.end());
  sweep_valid_ = true;
  sweep_pins_ = pins;
}

// True when r is still the rank of a row the sweep's pins let go.
bool CachePolicy::Current(const Rank& r) const {
  const Handle h = r.handle();
  return MayEvict(h, sweep_pins_) && RankOf(h) == r;
}

bool CachePolicy::PopVictim(Victim* out, Pins pins) {
  if (!sweep_valid_ || sweep_pins_ != pins) Sweep(pins);
  for (;;) {
    while (!swept_.empty() && !Current(swept_.back())) swept_.pop_back();
    while (!changed_.empty() && !Current(changed_.front())) {
      std::pop_heap(changed_.begin(), changed_.end());
      changed_.pop_back();
    }
    // Rows unchanged since the sweep but not kept by it rank below every kept one: once
    // the kept ones are gone, sweep again.
    if (swept_.empty() && !sweep_whole_) {
      Sweep(pins);
      continue;
    }
    if (swept_.empty() && changed_.empty()) return false;
    const bool from_changed = swept_.empty() || (!changed_.empty() && swept_.back() < changed_.front());
    if (from_changed) {
      std::pop_heap(changed_.begin(), changed_.end());
      Evict(changed_.back().handle(), out);
      changed_.pop_back();
    } else {
      Evict(swept_.back().handle(), out);
      swept_.pop_back();
    }
    return true;
  }
}

void CachePolicy::PopVictims(size_t n, Pins pins, std::vector<Victim>* out, const std::function<bool(Handle)>& spare) {
  sweep_valid_ = false;
  if (n == 0) return;
  std::vector<Rank> ranks;
  for (Handle h = 0; h < meta_.size(); ++h) {  // in handle order: a sequential read
    if (MayEvict(h, pins) && !(spare && spare(h))) ranks.push_back(RankOf(h));
  }
  if (ranks.size() > n) {
    std::nth_element(ranks.begin(), ranks.begin() + static_cast<std::ptrdiff_t>(n), ranks.end(),
                     [](const Rank& a, const Rank& b) { return b < a; });
    ranks.resize(n);
  }
  // Victims lie at random: each one's entry, then its index slots, are loaded a few
  // victims ahead, so the loop overlaps their cache misses.
  constexpr size_t kEntryAhead = 16, kSlotAhead = 8;
  out->reserve(out->size() + ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i + kEntryAhead < ranks.size()) {
      PrefetchLine(&meta_[ranks[i + kEntryAhead].handle()]);
      PrefetchLine(&keys_[ranks[i + kEntryAhead].handle()]);
    }
    if (i + kSlotAhead < ranks.size()) index_.Prefetch(keys_[ranks[i + kSlotAhead].handle()]);
    Evict(ranks[i].handle(), &out->emplace_back());
  }
}

void CachePolicy::Erase(Handle h) {
  Victim gone;
  Evict(h, &gone);
  sweep_valid_ = false;  // PopVictim's order may hold the row
}

void CachePolicy::Evict(Handle h, Victim* out) {
  Meta& m = meta_[h];
  if (m.pins != 0) {  // kMayEvict: the key stays pinned while absent
    FindPinnedPass(m.pins, [&](int pass) {
      AbsentPins(pass).Add(keys_[h]);
      return false;
    });
    --pinned_rows_;
  }
  out->key = keys_[h];
  out->handle = h;
  index_.Erase(keys_[h], Keys());
  m = Meta{0, kFreeStamp, 0};
  free_.push_back(h);
}

}  // namespace strata
