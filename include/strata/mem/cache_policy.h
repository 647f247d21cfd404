// CachePolicy: the MEM-PS eviction order. The DRAM cache (strata/mem/mem_ps.h) and the
// replay simulator (strata/mem/policy_sim.h) both run this class, so what the simulator
// measures is what the cache does.
//
// The paper's policy (000 appendix D, AIBox 4.2): rows touched in the current pass sit in an
// LRU list and are pinned while their pass (and the prefetched passes) are in flight; at the
// pass's end they drop into an LFU list; when memory runs short the least frequent are
// flushed. Here the two lists become one order over the unpinned rows:
//   - pinned rows (Pin(h, pass) until UnpinPass(pass)) are never victims: with the trainer
//     pinning each pass's working set, they are exactly the paper's LRU list;
//   - every unpinned row is a candidate, least frequent first; among equal frequencies the
//     most recently touched goes first (incumbents stay, so a burst of new keys that are
//     seen once cannot flush the rows that proved themselves).
// Unpinned rows of the current pass compete with older rows by frequency rather than after
// them: when the capacity is below one pass's working set (as cache_sim measures) evicting
// all older rows first loses about half the hits at 5% of Criteo's keys.
// The frequency is whatever the caller passes to Touch: the row's own counter (RowLayout
// freq: examples that touched the key, kept across evictions by the backing store) or
// PassCount(h), the passes that touched the row while it was cached.
//
// Costs: Find O(1) expected; Touch, Pin, UnpinPass and PopVictim O(log n) per row (an
// indexed binary heap). About 40 bytes per row plus the hash index.
// Thread safety: none; the cache keeps one policy per lock stripe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

namespace strata {

class CachePolicy {
 public:
  using Handle = uint32_t;
  static constexpr Handle kNone = UINT32_MAX;

  struct Victim {
    uint64_t key = 0;
    uint32_t payload = 0;
  };

  // Starts pass `pass` (passes only grow). Used by PassCount; Touch stamps rows with it.
  void BeginPass(int pass);
  int pass() const { return pass_; }

  // The row's handle, or kNone when the key is not cached.
  Handle Find(uint64_t key) const;

  // Adds an absent key with frequency 0 and a caller-owned payload (the cache's row slot).
  // The new row is a candidate at once; callers Touch it next. REQUIRES: Find(key) == kNone.
  Handle Insert(uint64_t key, uint32_t payload);

  // Records an access in the current pass; freq is the row's frequency after the access.
  void Touch(Handle h, uint64_t freq);

  // freq(h) + 1 if h was not touched yet in the current pass, else freq(h).
  uint64_t PassCount(Handle h) const;

  // Pins h until UnpinPass(pass). A row may be pinned for several passes; it stays pinned
  // until the last of them is unpinned. REQUIRES: pass > every pass unpinned so far.
  void Pin(Handle h, int pass);

  // Releases the pins of `pass`. REQUIRES: passes are unpinned in increasing order.
  void UnpinPass(int pass);

  // Removes the least valuable unpinned row and returns it; false when every row is pinned.
  bool PopVictim(Victim* out);

  uint64_t key(Handle h) const { return entries_[h].key; }
  uint32_t payload(Handle h) const { return entries_[h].payload; }
  uint64_t freq(Handle h) const { return entries_[h].freq; }
  bool pinned(Handle h) const { return entries_[h].pin_pass != kUnpinned; }

  size_t size() const { return index_.size(); }
  size_t pinned_rows() const { return index_.size() - heap_.size(); }

  // Visits every cached row as (key, payload), in no particular order.
  template <typename F>
  void ForEach(F&& visit) const {
    for (const auto& [k, h] : index_) visit(k, entries_[h].payload);
  }

 private:
  static constexpr int kUnpinned = -1;
  static constexpr uint32_t kNotInHeap = UINT32_MAX;

  struct Entry {
    uint64_t key = 0;
    uint64_t freq = 0;
    uint64_t stamp = 0;     // order of the last touch; larger is more recent
    uint32_t payload = 0;
    uint32_t heap_pos = kNotInHeap;
    int32_t last_pass = -1;  // pass of the last touch
    int32_t pin_pass = kUnpinned;  // largest pass pinning the row
  };

  // True when a should be evicted before b.
  bool Before(Handle a, Handle b) const;
  void HeapPush(Handle h);
  void HeapErase(Handle h);
  void HeapFix(Handle h);
  void SiftUp(uint32_t pos);
  void SiftDown(uint32_t pos);
  void Place(uint32_t pos, Handle h);

  int pass_ = 0;
  int unpinned_through_ = -1;  // largest pass released by UnpinPass
  uint64_t clock_ = 0;
  std::vector<Entry> entries_;
  std::vector<Handle> free_;
  std::unordered_map<uint64_t, Handle> index_;
  std::vector<Handle> heap_;  // unpinned rows; heap_[0] is the next victim
  std::map<int, std::vector<Handle>> pins_;  // pass -> rows Pin()ned for it
};

}  // namespace strata
