// CompactIndex: the SSD-PS DRAM index, key -> location (location.h) of the key's newest
// record, in about 7.4 bytes per key where a table of keys would take 20 or more.
//
// Layout. A key's 64-bit Mix64 hash gives a 40-bit tag; the top D bits of the tag pick one
// of 2^D blocks (D >= 16, grown by one when blocks average over kSplitAt entries), and each
// block is a sorted array of 7-byte entries: the tag's low 24 bits (the fingerprint) and
// the 32-bit location. Keys whose block and fingerprint equal a key already indexed (about
// n / 2^40 of inserts: 2 in 10^5 at 20M keys) are kept whole in a small exact overflow map
// instead, so within a block a fingerprint names at most one key.
//
// What a fingerprint cannot tell is whether a key is the one indexed or a different key
// with the same fingerprint. Two rules make the answers exact anyway:
//   - Find returns a *candidate*: the location of key's record when key is indexed, and
//     otherwise possibly another key's. The caller reads the record and compares its key
//     (every record holds its key), so a Get of an absent key costs a read only on a
//     fingerprint match.
//   - Upsert is told by its caller whether key is indexed (`indexed`). Then a fingerprint
//     match is key's own entry when indexed, and a different key (key goes to the
//     overflow map) when not, with no disk read. A caller that does not know must find
//     out first (SsdStore reads the candidate record). A wrong `indexed` loses a row.
// Locations are unique to records, so "the entry of key pointing at `from`" (ReplaceIf) is
// exact without the key.
//
// Erase removes an indexed key's entry. Since a fingerprint names at most one key within
// its block, the entry found for an indexed key is its own; the caller must know the key
// is indexed (an absent key would take another's entry).
//
// Memory. The blocks are cut into 16 equal ranges (parts); a part's blocks keep their
// entries one after another in its arena (part_arena.h), in block order, with a little
// room each. A large batch lays a part it brings many keys out again in one sequential
// pass, in place where its arena can grow (a block visited elsewhere in memory waits for
// its lines; a pass streams them); a block that outgrows its room moves to an array of its
// own until then (see DisbandIfAbandoned for the bound).
//
// Thread safety: none; SsdStore guards it with its index lock. UpsertBatch spreads one
// large batch over threads itself: it groups the keys by block and each thread merges
// them into a part.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ssd/part_arena.h"
#include "strata/common/spare_threads.h"

namespace strata::ssd {

class CompactIndex {
 public:
  CompactIndex();
  ~CompactIndex();
  CompactIndex(const CompactIndex&) = delete;
  CompactIndex& operator=(const CompactIndex&) = delete;

  // The candidate location of key (see above); false when key is certainly absent.
  bool Find(uint64_t key, uint32_t* loc) const;
  // Points key at loc. indexed: whether key already has an entry (see above). Returns
  // whether it had one, and then its previous location in *old.
  bool Upsert(uint64_t key, bool indexed, uint32_t loc, uint32_t* old);
  // Upsert of distinct keys (n): had[i] and old[i] are Upsert(keys[i], indexed[i],
  // locs[i], &old[i])'s result and old location. The entries after are those of the calls
  // in order. A batch of kKeysWorthAThread keys or more is grouped by block and merged
  // into each block in one walk, the blocks spread over `threads`; `beside` runs on one of
  // them meanwhile (before a smaller batch's upserts). It must not touch the index.
  void UpsertBatch(const uint64_t* keys, size_t n, const uint8_t* indexed, const uint32_t* locs, uint8_t* had,
                   uint32_t* old, SpareThreads* threads, const std::function<void()>& beside = [] {});
  // Removes key's entry and gives its location in *loc. REQUIRES: key is indexed.
  void Erase(uint64_t key, uint32_t* loc);
  // Moves key's entry from `from` to `to` if it points at `from`; returns whether it did.
  bool ReplaceIf(uint64_t key, uint32_t from, uint32_t to);
  // Calls fn(i) for each i < n in order, loading the blocks of the keys a few places ahead
  // meanwhile, so that a batch of Finds or Upserts waits for about one cache miss a key, not
  // two or three (the block header, then its entries).
  template <typename Fn>
  void ForEachPrefetched(const uint64_t* keys, size_t n, const Fn& fn) const {
    constexpr size_t kHeaderAhead = 16, kEntriesAhead = 8;
    for (size_t i = 0; i < n; ++i) {
      if (i + kHeaderAhead < n) PrefetchHeader(keys[i + kHeaderAhead]);
      if (i + kEntriesAhead < n) PrefetchEntries(keys[i + kEntriesAhead]);
      fn(i);
    }
  }

  // Visits every entry's location.
  void ForEachLocation(const std::function<void(uint32_t loc)>& fn) const;

  // The most bytes a key the index holds: its entries, their room and the block table
  // (7.4-7.9 from 2M to 16M keys), and the parts that a large batch's
  // `threads` lay out again at once, each held twice meanwhile.
  static double PeakBytesPerKey(int threads);

  size_t size() const { return size_ + overflow_.size(); }
  // Bytes allocated: the block table, the entry arrays, the overflow map's nodes and buckets.
  size_t bytes() const;

 private:
  // The index's blocks are cut into kParts equal ranges (powers of two, so that a split's
  // halves of part p's blocks are the new part p's). A part's blocks keep their entries
  // one after another in the part's arena, in block order, each with a little room; a
  // block that outgrows its room moves to an array of its own until the part is rebuilt.
  static constexpr size_t kParts = 16;
  struct Block {
    uint8_t* data = nullptr;  // cap entries of kEntryBytes (+ padding for 8-byte loads)
    uint32_t count = 0;
    uint32_t cap : 31 = 0;
    uint32_t own : 1 = 0;  // data is an array of its own, not in the part's arena
  };
  // What upserts add beyond their blocks' entries, applied by Commit: a batch's parts
  // collect their own, so that parts on other threads share nothing else.
  struct Additions {
    size_t entries = 0;
    int64_t entry_bytes = 0;  // the change in the bytes of the parts' arenas and arrays
    std::vector<std::pair<uint64_t, uint32_t>> overflow;
  };
  // UpsertBatch's arguments, by the batch's positions, that the walks read or write
  // only for the keys they find.
  struct Batch {
    const uint64_t* keys;
    uint8_t* had;
    uint32_t* old;
  };
  struct Pending {  // a batch key bound for a block, with what its walk reads of it
    uint64_t tag : 63;
    uint64_t indexed : 1;
    uint32_t i;  // its position in the batch
    uint32_t loc;
  };
  struct Grouped {  // a large batch by block: pending[begin[b] .. begin[b + 1]) are block b's
    std::vector<Pending> pending;
    std::vector<uint32_t> begin;
  };
  struct NewEntry {  // a block's new entry, to go before the block's entry `before`
    uint32_t before;
    uint32_t fingerprint;
    uint32_t loc;
  };
  struct PartScratch {  // what one part of a large batch reuses from block to block
    std::vector<NewEntry> added;  // a block's new entries, in order
    std::vector<size_t> rooms;  // a rebuilt part's: each block's slot bytes (SlotRooms)
    std::vector<size_t> slots;  // a rebuilt part's: where each block's entries go (PlanSlots)
    Additions add;
  };
  struct Slot {  // where a tag's entry is, or would go, in its block
    Block* block;
    uint32_t at;
    bool found;
  };

  const Block& BlockOf(uint64_t tag) const;
  // Where Locate starts looking for tag in b: its proportional rank.
  uint32_t StartOf(const Block& b, uint64_t tag) const;
  Slot Locate(uint64_t tag) const;
  void PrefetchHeader(uint64_t key) const;
  // Reads the block's header (prefetch it first): the entries where Locate starts.
  void PrefetchEntries(uint64_t key) const;
  // key's location in the overflow map, or nullptr.
  uint32_t* Overflowed(uint64_t key);
  const uint32_t* Overflowed(uint64_t key) const;
  // Upsert within the blocks, the rest in *add. Touches only key's block (and the value
  // of key's own overflow entry).
  bool UpsertInBlock(uint64_t key, bool indexed, uint32_t loc, uint32_t* old, Additions* add);
  Grouped GroupByBlock(const uint64_t* keys, size_t n, const uint8_t* indexed, const uint32_t* locs) const;
  // Part p's blocks [first, end).
  std::pair<size_t, size_t> PartBlocks(size_t p) const;
  // A large batch's upserts into part p (see the .cpp); sorts its pending.
  Additions MergePart(size_t p, const Batch& batch, Grouped& grouped);
  void VisitBlocks(size_t p, const Batch& batch, Grouped& grouped, PartScratch* scratch);
  void RebuildPart(size_t p, const Batch& batch, Grouped& grouped, PartScratch* scratch);
  // The bytes of each of part p's blocks' slot in a rebuild: room for the block's entries,
  // every key of the batch not indexed among them, and a little more.
  void SlotRooms(size_t p, const Grouped& grouped, std::vector<size_t>* rooms) const;
  // Where a rebuilt part's blocks go: (*slots)[k] the byte offset of block first + k's
  // entries, (*slots)[blocks] the end, each slot rooms[k] bytes. With old_base (the part's
  // arena), no slot starts before its block's present place there, so that the blocks can
  // move up in place from the top down; *moves_up: whether one does. Returns the arena's
  // bytes.
  size_t PlanSlots(size_t p, const std::vector<size_t>& rooms, const uint8_t* old_base, std::vector<size_t>* slots,
                   bool* moves_up) const;
  static void PrefetchBlock(const Block& b);
  void MergeIntoBlock(Block* b, const Batch& batch, Pending* pending, size_t m, PartScratch* scratch);
  // The upserts of a block's keys (sorted) but its new entries, which it lists in *added
  // (empty before).
  void PlanInBlock(Block* b, const Batch& batch, const Pending* pending, size_t m, std::vector<NewEntry>* added,
                   Additions* add);
  // Where tag's fingerprint is or would go among b's entries, at `lowest` or after (a
  // sorted walk's last place), looked for from its proportional rank.
  uint32_t PlaceFrom(const Block& b, uint64_t tag, uint32_t lowest) const;
  static void MergeEntries(const uint8_t* from, uint32_t count, std::span<const NewEntry> added, uint8_t* to);
  // A batch key kept in the overflow map takes its entry there (had, old set): returns
  // whether it was there.
  bool UpdateOverflowed(const Batch& batch, const Pending& q);
  static void SortByFingerprint(Pending* pending, size_t m);
  // Counts the entries, moves the overflow keys into the map and splits as needed.
  void Commit(Additions* add);
  void Insert(const Slot& s, uint64_t tag, uint32_t loc);
  // Moves b's count entries to an array of its own with room for cap; adds the change in
  // bytes to *bytes (the index's count, or a batch part's: a counter shared by the parts
  // would bounce between their cores at every regrown block).
  void MoveToOwnArray(Block* b, uint32_t cap, int64_t* bytes);
  // b's entries become data (room for cap, an array of its own), its old array freed or
  // its arena slot counted as left.
  void AdoptOwnArray(Block* b, uint8_t* data, uint32_t cap, int64_t* bytes);
  size_t PartOf(const Block* b) const;
  // Moves part p's blocks out of its arena, and frees it, once blocks have left much of it.
  void DisbandIfAbandoned(size_t p, int64_t* bytes);
  // Frees b's array if it has its own (its entries copied elsewhere first).
  static void FreeOwnArray(Block* b, int64_t* bytes);
  static std::unique_ptr<uint8_t[]> Allocate(size_t cap);
  void Split();  // doubles the blocks

  std::vector<Block> blocks_;
  std::vector<PartArena> arenas_;  // by part
  std::vector<size_t> abandoned_;  // by part: bytes of its arena that blocks left
  int block_bits_;
  size_t size_ = 0;  // entries in blocks
  int64_t entry_bytes_ = 0;  // in arenas and arrays (a batch's parts count theirs in Additions)
  std::unordered_map<uint64_t, uint32_t> overflow_;
};

}  // namespace strata::ssd
