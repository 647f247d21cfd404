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
// Costs: Find O(1) expected; Touch, Pin and Insert O(1); UnpinPass one sweep over the
// entries (clearing a pass's pin bit is cheaper than keeping per-pass lists); PopVictims(n)
// one sweep and a selection, O(rows), exactly the n first rows of the order, which is how
// the cache evicts (once per pass, in bulk). PopVictim, one row at a time (the simulator),
// keeps the best eighth of a sweep sorted plus a heap of the rows changed since, which is
// exact too (a row unchanged since the sweep and outside that eighth cannot beat any row
// in it) at O(8 + log n) amortized. There are no heaps to keep in order on every touch: a
// row costs a 20-byte entry (key, freq, touch stamp, pin bits) and its handle and tag in the
// key index (HandleTable: about 9 bytes); bytes() adds up what is allocated. Handles are
// dense (0, 1, ... reused after eviction), so the cache uses a row's handle as its slot in
// the row arena. A row's last pass is not stored: it is the pass whose first stamp is the
// last below the row's stamp. Pins of keys not cached go into a Bloom filter per pass (1.75
// bytes a key), which Insert asks: about 0.2% of inserted keys are taken for pinned by a pass
// they are not in, and so stay until it is released. Pins only order evictions, so that
// costs a little DRAM, never a row.
// Thread safety: none; the cache keeps one policy per lock stripe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "strata/common/handle_table.h"
#include "strata/common/huge_pages.h"
#include "strata/mem/bloom_filter.h"

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
  // Starts loading what Find, Insert and PinKey of key read first (its index slots and its
  // bits in the filters of pins of absent keys), so a caller handling many keys can overlap
  // their cache misses: call it a few keys ahead.
  void Prefetch(uint64_t key) const;

  // Adds an absent key with frequency 0, untouched, pinned for the passes PinKey named for
  // it while it was absent, and returns its handle: the last one freed, else
  // handle_limit() (new). Callers Touch it next. REQUIRES: Find(key) == kNone.
  Handle Insert(uint64_t key);
  // Insert for a key that some pass not yet unpinned named in PinKey while it was absent;
  // kNone, adding nothing, for a key no such pass named (the filters of absent pins may
  // take a key for named when it was not: about 0.2%).
  Handle InsertPinned(uint64_t key);

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

  // Releases the pins of `pass` and of every pass before it.
  // REQUIRES: pass > every pass unpinned so far.
  void UnpinPass(int pass);

  // Removes the first row of the eviction order and returns it; false when none is left
  // (with kKeep: when every row is pinned). A pinned row evicted with kMayEvict keeps its
  // pins as if its key were absent.
  bool PopVictim(Victim* out, Pins pins = Pins::kKeep);

  // Removes the first n rows of the eviction order (fewer when fewer may go), appending
  // them to *out in no particular order: the rows n PopVictim calls would return. Rows for
  // which spare(handle) is true are passed over.
  void PopVictims(size_t n, Pins pins, std::vector<Victim>* out, const std::function<bool(Handle)>& spare = nullptr);

  // Removes a cached row (its handle is free again); a pinned one keeps its pins as if its
  // key were absent.
  void Erase(Handle h);

  uint64_t key(Handle h) const { return keys_[h]; }
  uint64_t freq(Handle h) const { return meta_[h].freq; }
  bool pinned(Handle h) const { return meta_[h].pins != 0; }

  size_t size() const { return index_.size(); }
  size_t pinned_rows() const { return pinned_rows_; }
  // Handles are below this (the rows the caller's arena must address).
  size_t handle_limit() const { return keys_.size(); }
  // DRAM the policy allocates: entries, key index, filters of absent pinned keys and the PopVictim order.
  size_t bytes() const;

  // Visits every cached row as (key, handle), in no particular order.
  template <typename F>
  void ForEach(F&& visit) const {
    index_.ForEach([&](Handle h) { visit(keys_[h], h); });
  }

  // Test hook: the touch stamp at which stamps are renumbered (default UINT32_MAX - 1).
  void set_stamp_limit(uint32_t limit) { stamp_limit_ = limit; }

 private:
  static constexpr int kNoUse = INT32_MAX;
  static constexpr uint32_t kFreeStamp = UINT32_MAX;  // marks a freed entry
  static constexpr uint32_t kUntouched = 0;           // inserted, not touched yet

  struct Meta {
    uint32_t freq = 0;
    uint32_t stamp = kUntouched;  // order of the last touch; larger is more recent
    uint32_t pins = 0;            // bit (p mod kPinWindow) for each pinned pass p
  };
  static_assert(sizeof(Meta) == 12, "with its key, a cached row's policy entry is 20 bytes");

  // A row's place in the eviction order as one comparable value: the larger goes first.
  // By next use (none, then the farthest), then the lower frequency, then the newer
  // touch, then the larger handle (so the order is total).
  struct Rank {
    uint64_t hi = 0;  // next use << 32 | ~freq
    uint64_t lo = 0;  // stamp << 32 | handle
    Handle handle() const { return static_cast<Handle>(lo); }
    bool operator<(const Rank& o) const { return hi != o.hi ? hi < o.hi : lo < o.lo; }
    bool operator==(const Rank& o) const { return hi == o.hi && lo == o.lo; }
  };

  auto Keys() const {
    return [this](Handle h) { return keys_[h]; };
  }

  bool Live(Handle h) const { return meta_[h].stamp != kFreeStamp; }
  bool MayEvict(Handle h, Pins pins) const { return Live(h) && (pins == Pins::kMayEvict || meta_[h].pins == 0); }
  Rank RankOf(Handle h) const;
  // The first pass in pins (oldest first) for which found(pass) is true, or kNoUse.
  template <typename F>
  int FindPinnedPass(uint32_t pins, F&& found) const;
  int NextUse(const Meta& m) const;
  bool TouchedSince(uint32_t stamp, int pass) const;
  uint32_t FirstStamp(int pass) const;
  void NotePinnedPass(int pass);
  BloomFilter& AbsentPins(int pass);
  // The pin bits of the passes whose filters of absent pins hold key.
  uint32_t AbsentPinsOf(uint64_t key) const;
  Handle InsertWithPins(uint64_t key, uint32_t pins);
  uint32_t NextStamp();
  void RenumberStamps();
  void Changed(Handle h);
  void Sweep(Pins pins);
  bool Current(const Rank& r) const;
  void Evict(Handle h, Victim* out);

  int pass_ = 0;
  int unpinned_through_ = -1;  // largest pass released by UnpinPass
  uint32_t clock_ = 0;         // the last stamp given
  uint32_t stamp_limit_ = UINT32_MAX - 1;
  uint32_t pass_first_stamp_ = 1;  // the first stamp of pass_
  // (pass, its first stamp) for the passes begun after unpinned_through_, oldest first.
  std::vector<std::pair<int, uint32_t>> pass_stamps_ = {{0, 1}};
  std::vector<int> pinned_passes_;  // passes pinned and not yet unpinned, ascending
  HugeVector<uint64_t> keys_;      // per handle
  HugeVector<Meta> meta_;          // per handle
  std::vector<Handle> free_;
  HandleTable index_;               // key -> handle
  size_t pinned_rows_ = 0;
  // Per pass pinned and not yet unpinned, ascending: the keys pinned for it while not cached.
  std::vector<std::pair<int, BloomFilter>> absent_pins_;
  size_t absent_hint_ = 1024;  // keys a pass's filter starts sized for: the most one held
  // PopVictim's order: the best ranks of the last sweep (best last) and a heap of the ranks
  // of rows changed since; valid while sweep_valid_, for the rows sweep_pins_ may evict.
  std::vector<Rank> swept_;
  std::vector<Rank> changed_;
  bool sweep_valid_ = false;
  bool sweep_whole_ = false;  // the sweep kept every row it may evict
  Pins sweep_pins_ = Pins::kKeep;
};

}  // namespace strata
