// CachePolicy: the MEM-PS eviction order. The DRAM cache (strata/mem/mem_ps.h) and the
// replay simulator (strata/mem/policy_sim.h) both run this class, so what the simulator
// measures is what the cache does.
//
// The paper's policy (000 appendix D, AIBox 4.2): rows touched in the current pass sit in an
// LRU list and are pinned while their pass (and the prefetched passes) are in flight; at the
// pass's end they drop into an LFU list; when memory runs short the least frequent are
// flushed. Here the lists become one order over all rows, the first evicted first:
//   1. rows with no known next use, least frequent first; among equal frequencies the most
//      recently touched goes first (incumbents stay, so a burst of new keys that are seen
//      once cannot flush the rows that proved themselves);
//   2. then rows with a known next use, the farthest first.
// A known next use comes from a pin: Pin(h, pass) or PinKey(key, pass) says the row is in
// `pass`'s working set, held until UnpinPass(pass). The trainer pins the pass in training,
// the passes pulled ahead and the next pass read (whose keys it announces before pulling
// them), so the policy sees one pass further than the pulls: the rows the next pull will ask
// for are the last to go, which is what brings it within 10% of Belady's optimum.
// PopVictim(kKeep) takes only unpinned rows (the cache never evicts a pinned row; it goes
// over budget instead); PopVictim(kMayEvict) follows the whole order (the simulator, which
// holds every policy to exactly its capacity). A row's next use is the first pass it is
// pinned for after the pass of its last touch. Unpinned rows of the current pass compete
// with older rows by frequency rather than after them: when the capacity is below one
// pass's working set, evicting all older rows first loses about half the hits at 5% of
// Criteo's keys.
// The frequency is whatever the caller passes to Touch: the row's own counter (RowLayout
// freq: examples that touched the key, kept across evictions by the backing store) or
// PassCount(h), the passes that touched the row while it was cached.
//
// Costs: Find O(1) expected; Touch, Pin, UnpinPass and PopVictim O(log n) per row (two
// indexed binary heaps: unpinned and pinned rows). A row costs a 32-byte entry, its 4-byte
// heap slot and its handle and tag in the key index (HandleTable: about 9 bytes); bytes() adds up
// what is allocated. Handles are dense (0, 1, ... reused after eviction), so the cache
// uses a row's handle as its slot in the row arena. Pins of uncached keys wait in a
// second, 16-byte-entry table, listed by pass so that releasing a pass visits only its
// keys, until the key is inserted.
// Thread safety: none; the cache keeps one policy per lock stripe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "strata/common/handle_table.h"

namespace strata {

class CachePolicy {
 public:
  using Handle = uint32_t;
  static constexpr Handle kNone = UINT32_MAX;
  // Passes pinned at once (from the oldest pin not yet released to the newest) must span
  // fewer than this many passes.
  static constexpr int kPinWindow = 32;

  struct Victim {
    uint64_t key = 0;
    Handle handle = kNone;  // free again: the next Insert may return it
  };

  // Makes room for rows cached at once without reallocating (a hint; more still fit).
  void Reserve(size_t rows);

  enum class Pins { kKeep, kMayEvict };

  // Starts pass `pass` (passes only grow). Used by PassCount; Touch stamps rows with it.
  void BeginPass(int pass);
  int pass() const { return pass_; }

  // The row's handle, or kNone when the key is not cached.
  Handle Find(uint64_t key) const;

  // Adds an absent key with frequency 0, pinned for the passes PinKey named for it while it
  // was absent, and returns its handle: the last one freed, else handle_limit() (new).
  // Callers Touch it next. REQUIRES: Find(key) == kNone.
  Handle Insert(uint64_t key);

  // Records an access in the current pass; freq is the row's frequency after the access
  // (kept up to UINT32_MAX).
  void Touch(Handle h, uint64_t freq);

  // freq(h) + 1 if h was not touched yet in the current pass, else freq(h).
  uint64_t PassCount(Handle h) const;

  // Pins h for `pass` until UnpinPass(pass). A row may be pinned for several passes; it stays
  // pinned until the last of them is unpinned. REQUIRES: pass > every pass unpinned so far,
  // and pass - (the oldest pass still pinned) < kPinWindow.
  void Pin(Handle h, int pass);
  // Pin for a key, cached or not: an absent key is pinned when it is inserted.
  void PinKey(uint64_t key, int pass);

  // Releases the pins of `pass`. REQUIRES: passes are unpinned in increasing order.
  void UnpinPass(int pass);

  // Removes the first row of the eviction order and returns it; false when none is left
  // (with kKeep: when every row is pinned). A pinned row evicted with kMayEvict keeps its
  // pins as if its key were absent.
  bool PopVictim(Victim* out, Pins pins = Pins::kKeep);

  uint64_t key(Handle h) const { return entries_[h].key; }
  uint64_t freq(Handle h) const { return entries_[h].freq; }
  bool pinned(Handle h) const { return entries_[h].pins != 0; }

  size_t size() const { return index_.size(); }
  size_t pinned_rows() const { return pinned_heap_.size(); }
  // Handles are below this (the rows the caller's arena must address).
  size_t handle_limit() const { return entries_.size(); }
  // DRAM the policy allocates: entries, heaps, key index, pin lists and pending pins.
  size_t bytes() const;

  // Visits every cached row as (key, handle), in no particular order.
  template <typename F>
  void ForEach(F&& visit) const {
    index_.ForEach([&](Handle h) { visit(entries_[h].key, h); });
  }

  // Test hook: the touch stamp at which stamps are renumbered (default UINT32_MAX).
  void set_stamp_limit(uint32_t limit) { stamp_limit_ = limit; }

 private:
  static constexpr uint32_t kNotInHeap = UINT32_MAX;
  static constexpr int kNoUse = INT32_MAX;

  // Passes a key is pinned for: bit (p mod kPinWindow) for each pass p, and the newest p.
  struct PinSet {
    uint32_t bits = 0;
    int32_t newest = -1;
    void Add(int pass);
    bool Has(int pass) const;
    void Remove(int pass);
    // The first pinned pass after `pass`, or kNoUse.
    int FirstAfter(int pass) const;
    // Calls f(p) for each pinned pass p.
    template <typename F>
    void ForEach(F&& f) const;
  };

  struct Entry {
    uint64_t key = 0;
    uint32_t freq = 0;
    uint32_t stamp = 0;        // order of the last touch; larger is more recent
    uint32_t pins = 0;         // PinSet bits
    int32_t newest_pin = -1;   // PinSet newest
    int32_t last_pass = -1;    // pass of the last touch
    uint32_t heap_pos = kNotInHeap;
    PinSet pin_set() const { return PinSet{pins, newest_pin}; }
    void set_pin_set(const PinSet& s) {
      pins = s.bits;
      newest_pin = s.newest;
    }
  };
  static_assert(sizeof(Entry) == 32, "a cached row's policy entry stays 32 bytes");

  // The pins of a key not cached.
  struct Pending {
    uint64_t key = 0;
    PinSet pins;
  };

  auto EntryKeys() const {
    return [this](Handle h) { return entries_[h].key; };
  }
  auto PendingKeys() const {
    return [this](uint32_t i) { return pending_[i].key; };
  }

  int NextUse(const Entry& e) const { return e.pin_set().FirstAfter(e.last_pass); }
  // True when a should be evicted before b.
  bool Before(Handle a, Handle b) const;
  std::vector<Handle>& HeapOf(Handle h) { return pinned(h) ? pinned_heap_ : heap_; }
  void AddPending(uint64_t key, const PinSet& pins);
  void ErasePending(uint32_t i);
  uint32_t NextStamp();
  void RenumberStamps();
  void HeapPush(Handle h);
  void HeapErase(Handle h);
  void HeapFix(Handle h);
  void SiftUp(std::vector<Handle>& heap, uint32_t pos);
  void SiftDown(std::vector<Handle>& heap, uint32_t pos);
  void Place(std::vector<Handle>& heap, uint32_t pos, Handle h);

  int pass_ = 0;
  int unpinned_through_ = -1;  // largest pass released by UnpinPass
  uint32_t clock_ = 0;  // the last stamp given
  uint32_t stamp_limit_ = UINT32_MAX;
  std::vector<Entry> entries_;
  std::vector<Handle> free_;
  HandleTable index_;                // key -> handle
  std::vector<Handle> heap_;         // unpinned rows; heap_[0] is the next victim
  std::vector<Handle> pinned_heap_;  // pinned rows, in the same order
  std::map<int, std::vector<Handle>> pins_;          // pass -> rows pinned for it (may be stale)
  std::vector<Pending> pending_;                     // absent keys' pins; free ones have no bits
  std::vector<uint32_t> pending_free_;
  HandleTable pending_index_;                        // absent key -> index into pending_
  std::map<int, std::vector<uint64_t>> pending_keys_;  // pass -> keys pending for it (may be stale)
};

}  // namespace strata
