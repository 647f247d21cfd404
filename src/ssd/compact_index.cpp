// CompactIndex: fingerprinted sorted blocks with an exact overflow map (compact_index.h).
#include "ssd/compact_index.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <latch>
#include <span>

#include "strata/common/hash.h"
#include "strata/common/key_groups.h"
#include "strata/common/prefetch.h"

namespace strata::ssd {
namespace {

constexpr int kTagBits = 40;
constexpr int kFingerprintBits = 24;
constexpr int kMinBlockBits = kTagBits - kFingerprintBits;  // every split bit is in the fingerprint
constexpr int kMaxBlockBits = 30;
constexpr size_t kEntryBytes = 7;           // 24-bit fingerprint above a 32-bit location
constexpr size_t kLoadPadding = 1;          // an 8-byte load of the last entry stays inside
// Mean entries per block that doubles the blocks: an insert shifts half a block, whose
// lines are mostly not cached, so smaller blocks insert faster (64 against 128: about 14%
// faster upserts of new keys, 1.2x ssd_bench's load) for a larger block table (7.45 bytes
// a key against 7.31 at 8M keys).
constexpr size_t kSplitAt = 64;
constexpr uint64_t kFingerprintMask = (uint64_t{1} << kFingerprintBits) - 1;
constexpr uint64_t kEntryMask = (uint64_t{1} << (8 * kEntryBytes)) - 1;
// An unordered_map node as libstdc++ allocates it: next pointer, the pair, the cached hash.
constexpr size_t kOverflowNodeBytes = sizeof(void*) + sizeof(std::pair<const uint64_t, uint32_t>) + sizeof(size_t);

uint64_t TagOf(uint64_t key) { return Mix64(key) >> (64 - kTagBits); }

uint64_t LoadEntry(const uint8_t* data, uint32_t i) {
  uint64_t v;
  std::memcpy(&v, data + size_t{i} * kEntryBytes, sizeof(v));
  return v & kEntryMask;
}

void StoreEntry(uint8_t* data, uint32_t i, uint64_t fingerprint, uint32_t loc) {
  const uint64_t v = (fingerprint << 32) | loc;
  std::memcpy(data + size_t{i} * kEntryBytes, &v, kEntryBytes);
}

uint64_t Fingerprint(uint64_t entry) { return entry >> 32; }
// Capacity for n entries in an array of a block's own: a sixteenth (at least 4 entries) of
// slack, about 3% of the bytes.
uint32_t CapacityFor(uint32_t n) { return n + std::max<uint32_t>(4, n / 16); }
// Capacity for n entries in a part's arena: room for a few single upserts until the next
// large batch lays the part out again.
uint32_t RoomInArena(uint32_t n) { return n + n / 32; }
uint32_t Location(uint64_t entry) { return static_cast<uint32_t>(entry); }

}  // namespace

CompactIndex::CompactIndex() : blocks_(size_t{1} << kMinBlockBits), arenas_(kParts), abandoned_(kParts), block_bits_(kMinBlockBits) {}

CompactIndex::~CompactIndex() {
  for (Block& b : blocks_) FreeOwnArray(&b, &entry_bytes_);
}

CompactIndex::Slot CompactIndex::Locate(uint64_t tag) const {
  Block* b = const_cast<Block*>(&BlockOf(tag));
  const uint32_t at = PlaceFrom(*b, tag, 0);
  const bool found = at < b->count && Fingerprint(LoadEntry(b->data, at)) == (tag & kFingerprintMask);
  return Slot{b, at, found};
}

const CompactIndex::Block& CompactIndex::BlockOf(uint64_t tag) const { return blocks_[tag >> (kTagBits - block_bits_)]; }

// The fingerprint bits below the block bits, scaled to the block's count.
uint32_t CompactIndex::StartOf(const Block& b, uint64_t tag) const {
  const int low_bits = kTagBits - block_bits_;
  return static_cast<uint32_t>(((tag & ((uint64_t{1} << low_bits) - 1)) * b.count) >> low_bits);
}

void CompactIndex::PrefetchHeader(uint64_t key) const { PrefetchLine(&BlockOf(TagOf(key))); }

void CompactIndex::PrefetchEntries(uint64_t key) const {
  const uint64_t tag = TagOf(key);
  const Block& b = BlockOf(tag);
  if (b.count > 0) PrefetchLine(b.data + size_t{StartOf(b, tag)} * kEntryBytes);
}

uint32_t* CompactIndex::Overflowed(uint64_t key) {
  if (overflow_.empty()) return nullptr;  // the usual case: no hashing
  auto it = overflow_.find(key);
  return it == overflow_.end() ? nullptr : &it->second;
}

const uint32_t* CompactIndex::Overflowed(uint64_t key) const {
  return const_cast<CompactIndex*>(this)->Overflowed(key);
}

bool CompactIndex::Find(uint64_t key, uint32_t* loc) const {
  if (const uint32_t* o = Overflowed(key)) {
    *loc = *o;
    return true;
  }
  const Slot s = Locate(TagOf(key));
  if (!s.found) return false;
  *loc = Location(LoadEntry(s.block->data, s.at));
  return true;
}

bool CompactIndex::Upsert(uint64_t key, bool indexed, uint32_t loc, uint32_t* old) {
  Additions add;
  const bool had = UpsertInBlock(key, indexed, loc, old, &add);
  Commit(&add);
  return had;
}

void CompactIndex::UpsertBatch(const uint64_t* keys, size_t n, const uint8_t* indexed, const uint32_t* locs,
                               uint8_t* had, uint32_t* old, SpareThreads* threads, const std::function<void()>& beside) {
  if (n < kKeysWorthAThread) {  // too few keys to be worth a walk over every block
    beside();
    Additions add;
    ForEachPrefetched(keys, n, [&](size_t i) { had[i] = UpsertInBlock(keys[i], indexed[i] != 0, locs[i], &old[i], &add); });
    Commit(&add);
    return;
  }
  const Batch batch{keys, had, old};
  Grouped grouped;
  std::latch is_grouped(1);
  std::vector<Additions> adds(kParts);
  // Tasks are taken in order: `beside` first, so that it starts at once, then the grouping
  // beside it, which the parts wait for (a serial run has finished it by then).
  threads->ParallelFor(kParts + 2, [&](size_t task) {
    if (task == 0) return beside();
    if (task == 1) {
      grouped = GroupByBlock(keys, n, indexed, locs);
      std::memset(had, 0, n);  // here in order; the walks set the keys they find, out of order
      return is_grouped.count_down();
    }
    is_grouped.wait();
    adds[task - 2] = MergePart(task - 2, batch, grouped);
  });
  for (Additions& add : adds) Commit(&add);
}

// The batch grouped by block (GroupRecords), each block's keys in the batch's order. The
// records carry what the walk reads, so that it reads them in order, not at the batch's
// positions.
CompactIndex::Grouped CompactIndex::GroupByBlock(const uint64_t* keys, size_t n, const uint8_t* indexed,
                                                 const uint32_t* locs) const {
  const int low_bits = kTagBits - block_bits_;
  std::vector<uint64_t> tags(n);
  for (size_t i = 0; i < n; ++i) tags[i] = TagOf(keys[i]);
  Grouped g;
  g.begin = GroupRecords(
      n, blocks_.size(), [&](size_t i) { return tags[i] >> low_bits; },
      [&](size_t i) { return Pending{tags[i], indexed[i] != 0, static_cast<uint32_t>(i), locs[i]}; }, &g.pending);
  return g;
}

std::pair<size_t, size_t> CompactIndex::PartBlocks(size_t p) const {
  return {blocks_.size() * p / kParts, blocks_.size() * (p + 1) / kParts};
}

// A batch that brings a part two keys for every three of its blocks or more rewrites the
// whole part in one sequential pass (RebuildPart): a visit to a block elsewhere in memory
// waits for its lines, a pass streams them. A sparser batch visits only its keys' blocks.
// Where the two cost the same: with 2 threads, a rebuild took about 40 ns a block of the
// index (its new pages zeroed by the kernel included) and a visit 90-100 ns a key; puts of
// 65,536 keys into 8M (half a key a block) went at 88 ns a key visiting and 102-108
// rebuilding, puts of 200k into 16M (0.76 a block) at 96 and 50-56.
CompactIndex::Additions CompactIndex::MergePart(size_t p, const Batch& batch, Grouped& grouped) {
  const auto [first, end] = PartBlocks(p);
  PartScratch scratch;
  if ((grouped.begin[end] - grouped.begin[first]) * 3 >= (end - first) * 2) {
    RebuildPart(p, batch, grouped, &scratch);
  } else {
    VisitBlocks(p, batch, grouped, &scratch);
  }
  return std::move(scratch.add);
}

// Visits only the part's blocks with keys, going from one's keys to the next's, so a
// sparse batch (a few keys per hundred blocks) costs its keys, not the index's blocks; the
// blocks a few visits ahead are loaded meanwhile.
void CompactIndex::VisitBlocks(size_t p, const Batch& batch, Grouped& grouped, PartScratch* scratch) {
  constexpr size_t kBlocksAhead = 8;
  const std::vector<uint32_t>& begin = grouped.begin;
  Pending* pending = grouped.pending.data();
  const int low_bits = kTagBits - block_bits_;
  const auto block_of = [&](size_t k) { return static_cast<size_t>(pending[k].tag >> low_bits); };
  const auto next = [&](size_t k) { return size_t{begin[block_of(k) + 1]}; };  // the next block's first key
  const size_t first = begin[PartBlocks(p).first], end = begin[PartBlocks(p).second];
  size_t ahead = first;  // the first key of the next block to load
  for (size_t i = 0; i < kBlocksAhead && ahead < end; ++i, ahead = next(ahead)) PrefetchBlock(blocks_[block_of(ahead)]);
  for (size_t k = first; k < end; k = next(k)) {
    if (ahead < end) {
      PrefetchBlock(blocks_[block_of(ahead)]);
      ahead = next(ahead);
    }
    MergeIntoBlock(&blocks_[block_of(k)], batch, pending + k, next(k) - k, scratch);
  }
  DisbandIfAbandoned(p, &scratch->add.entry_bytes);
}

size_t CompactIndex::PartOf(const Block* b) const {
  return static_cast<size_t>(b - blocks_.data()) * kParts / blocks_.size();
}

// Once a sixteenth of a part's arena is slots its blocks left for arrays of their own
// (sparse batches and single upserts keep adding to blocks laid out with little room),
// the rest leave too, into arrays of their exact size, and the arena goes: the left slots
// never cost the index more than a sixteenth. The next dense batch lays the part out again.
void CompactIndex::DisbandIfAbandoned(size_t p, int64_t* bytes) {
  if (abandoned_[p] * 16 <= arenas_[p].bytes()) return;
  const auto [first, end] = PartBlocks(p);
  for (size_t k = first; k < end; ++k) {
    Block& b = blocks_[k];
    if (b.own) continue;
    if (b.count > 0) {
      MoveToOwnArray(&b, b.count, bytes);
    } else {
      b = Block{};
    }
  }
  *bytes -= static_cast<int64_t>(arenas_[p].bytes());
  arenas_[p] = PartArena();
  abandoned_[p] = 0;
}

void CompactIndex::PrefetchBlock(const Block& b) { PrefetchSpan(b.data, size_t{b.count} * kEntryBytes); }

// Every block of the part, its keys merged in, laid out again: in the part's arena, grown
// where it lies, when it has one that can grow so far (only the growth is new memory),
// else in a new one. The blocks are planned and moved one at a time, so a block's lines are
// read once: from the top down when blocks move up in place, so that none is overwritten
// before it moves, else in order (streams read forward faster). The old arena and any
// arrays of the blocks' own are freed after.
void CompactIndex::RebuildPart(size_t p, const Batch& batch, Grouped& grouped, PartScratch* scratch) {
  const auto [first, end] = PartBlocks(p);
  PartArena& arena = arenas_[p];
  const auto old_bytes = static_cast<int64_t>(arena.bytes());
  std::vector<size_t>& slots = scratch->slots;
  SlotRooms(p, grouped, &scratch->rooms);
  bool moves_up = false;
  const bool in_place =
      arena.data() != nullptr && arena.Grow(PlanSlots(p, scratch->rooms, arena.data(), &slots, &moves_up));
  PartArena fresh = in_place ? PartArena() : PartArena(PlanSlots(p, scratch->rooms, nullptr, &slots, &moves_up));
  uint8_t* base = in_place ? arena.data() : fresh.data();
  std::vector<NewEntry>& added = scratch->added;
  const auto relay = [&](size_t k) {
    Block& b = blocks_[k];
    added.clear();
    if (const size_t m = grouped.begin[k + 1] - grouped.begin[k]; m > 0) {
      Pending* pending = grouped.pending.data() + grouped.begin[k];
      SortByFingerprint(pending, m);
      PlanInBlock(&b, batch, pending, m, &added, &scratch->add);
    }
    uint8_t* to = base + slots[k - first];
    MergeEntries(b.data, b.count, added, to);
    FreeOwnArray(&b, &scratch->add.entry_bytes);
    scratch->add.entries += added.size();
    b.data = to;
    b.count += static_cast<uint32_t>(added.size());
    b.cap = static_cast<uint32_t>((slots[k - first + 1] - slots[k - first]) / kEntryBytes);
  };
  if (in_place && moves_up) {
    for (size_t k = end; k-- > first;) relay(k);
  } else {
    for (size_t k = first; k < end; ++k) relay(k);
  }
  if (!in_place) arena = std::move(fresh);
  scratch->add.entry_bytes += static_cast<int64_t>(arena.bytes()) - old_bytes;
  abandoned_[p] = 0;
}

void CompactIndex::SlotRooms(size_t p, const Grouped& grouped, std::vector<size_t>* rooms) const {
  const auto [first, end] = PartBlocks(p);
  rooms->resize(end - first);
  for (size_t k = first; k < end; ++k) {
    uint32_t fresh = 0;  // PlanInBlock adds entries for keys not indexed only
    for (uint32_t j = grouped.begin[k]; j < grouped.begin[k + 1]; ++j) fresh += !grouped.pending[j].indexed;
    (*rooms)[k - first] = size_t{RoomInArena(blocks_[k].count + fresh)} * kEntryBytes;
  }
}

size_t CompactIndex::PlanSlots(size_t p, const std::vector<size_t>& rooms, const uint8_t* old_base,
                               std::vector<size_t>* slots, bool* moves_up) const {
  const auto [first, end] = PartBlocks(p);
  slots->resize(end - first + 1);
  *moves_up = false;
  size_t at = 0;
  for (size_t k = first; k < end; ++k) {
    const Block& b = blocks_[k];
    if (old_base != nullptr && !b.own && b.data != nullptr) {
      const auto place = static_cast<size_t>(b.data - old_base);
      *moves_up = *moves_up || at > place;
      at = std::max(at, place);
    }
    (*slots)[k - first] = at;
    at += rooms[k - first];
  }
  (*slots)[end - first] = at;
  return at + kLoadPadding;
}

// The block's upserts: pending (one block's keys, in the batch's order) sorted by
// fingerprint, ties kept in order, then one walk over the block's entries (PlanInBlock)
// that sets found entries in place and lists the new ones, which then go in with a move of
// each run of entries between them: within the block's array, from the top down, when it
// has room, else into a regrown one. A batch spread over many blocks adds about one key to
// each, so the runs are long and move as whole spans.
void CompactIndex::MergeIntoBlock(Block* b, const Batch& batch, Pending* pending, size_t m, PartScratch* scratch) {
  SortByFingerprint(pending, m);
  std::vector<NewEntry>& added = scratch->added;
  added.clear();
  PlanInBlock(b, batch, pending, m, &added, &scratch->add);
  if (added.empty()) return;
  const uint32_t count = b->count + static_cast<uint32_t>(added.size());
  if (count > b->cap) {  // merged straight into an array of its exact size: the next batch regrows it
    uint8_t* data = Allocate(count).release();
    MergeEntries(b->data, b->count, added, data);
    AdoptOwnArray(b, data, count, &scratch->add.entry_bytes);
  } else {
    MergeEntries(b->data, b->count, added, b->data);
  }
  b->count = count;
  scratch->add.entries += added.size();
}

// Each key's place is found from the last key's (the keys are sorted) and its proportional
// rank. A key takes the entry of its fingerprint when indexed (the block's, or an earlier
// batch key's new one, as Upsert would) and goes to the overflow map when not (another key
// holds the fingerprint); otherwise a key not indexed gets a new entry, and one said to be
// indexed but not found (a caller's error) goes to the overflow map, which is exact, so
// that only keys not indexed add entries (RebuildPart sizes its arena so).
void CompactIndex::PlanInBlock(Block* b, const Batch& batch, const Pending* pending, size_t m,
                               std::vector<NewEntry>* added, Additions* add) {
  uint8_t* d = b->data;
  uint32_t at = 0;
  for (const Pending& q : std::span(pending, m)) {
    if (q.indexed && UpdateOverflowed(batch, q)) continue;
    const uint64_t fp = q.tag & kFingerprintMask;
    at = PlaceFrom(*b, q.tag, at);
    uint32_t* taken = nullptr;  // the location of the entry already holding fp
    if (!added->empty() && added->back().fingerprint == fp) {
      taken = &added->back().loc;
    } else if (at < b->count && Fingerprint(LoadEntry(d, at)) == fp) {
      if (q.indexed) {
        batch.had[q.i] = 1;
        batch.old[q.i] = Location(LoadEntry(d, at));
        StoreEntry(d, at, fp, q.loc);
        continue;
      }
    } else if (!q.indexed) {
      added->push_back(NewEntry{at, static_cast<uint32_t>(fp), q.loc});
      continue;
    }
    if (!q.indexed || taken == nullptr) {
      add->overflow.emplace_back(batch.keys[q.i], q.loc);
    } else {
      batch.had[q.i] = 1;
      batch.old[q.i] = std::exchange(*taken, q.loc);
    }
  }
}

// Fingerprints are uniform over the block's range, so the entry's rank is close to its
// proportional position: start there and step (a few entries, one or two cache lines).
uint32_t CompactIndex::PlaceFrom(const Block& b, uint64_t tag, uint32_t lowest) const {
  const uint64_t fp = tag & kFingerprintMask;
  uint32_t at = std::max(lowest, StartOf(b, tag));
  while (at > lowest && Fingerprint(LoadEntry(b.data, at - 1)) >= fp) --at;
  while (at < b.count && Fingerprint(LoadEntry(b.data, at)) < fp) ++at;
  return at;
}

// to: from's count entries with `added` among them (each before from's entry `before`),
// top down, so that `to` may be `from` itself when it has room for them all.
void CompactIndex::MergeEntries(const uint8_t* from, uint32_t count, std::span<const NewEntry> added, uint8_t* to) {
  const auto move = [&](uint32_t first, uint32_t end, size_t shift) {
    if (end > first && (from != to || shift > 0)) {
      std::memmove(to + (first + shift) * kEntryBytes, from + size_t{first} * kEntryBytes, size_t{end - first} * kEntryBytes);
    }
  };
  uint32_t end = count;
  for (size_t k = added.size(); k-- > 0;) {
    const NewEntry& e = added[k];
    move(e.before, end, k + 1);
    StoreEntry(to, static_cast<uint32_t>(e.before + k), e.fingerprint, e.loc);
    end = e.before;
  }
  move(0, end, 0);
}

bool CompactIndex::UpdateOverflowed(const Batch& batch, const Pending& q) {
  uint32_t* ov = Overflowed(batch.keys[q.i]);
  if (ov == nullptr) return false;
  batch.had[q.i] = 1;
  batch.old[q.i] = std::exchange(*ov, q.loc);
  return true;
}

// Insertion sort: stable (ties keep the batch's order), and a block gets a few keys.
void CompactIndex::SortByFingerprint(Pending* pending, size_t m) {
  const auto before = [](const Pending& x, const Pending& y) {
    return (x.tag & kFingerprintMask) < (y.tag & kFingerprintMask);
  };
  for (size_t k = 1; k < m; ++k) {
    for (size_t j = k; j > 0 && before(pending[j], pending[j - 1]); --j) std::swap(pending[j], pending[j - 1]);
  }
}

bool CompactIndex::UpsertInBlock(uint64_t key, bool indexed, uint32_t loc, uint32_t* old, Additions* add) {
  if (uint32_t* o = indexed ? Overflowed(key) : nullptr) {
    *old = *o;
    *o = loc;
    return true;
  }
  const uint64_t tag = TagOf(key);
  const Slot s = Locate(tag);
  if (!s.found) {
    Insert(s, tag, loc);
    ++add->entries;
    return false;
  }
  if (!indexed) {  // another key holds this fingerprint
    add->overflow.emplace_back(key, loc);
    return false;
  }
  *old = Location(LoadEntry(s.block->data, s.at));
  StoreEntry(s.block->data, s.at, tag & kFingerprintMask, loc);
  return true;
}

void CompactIndex::Commit(Additions* add) {
  size_ += add->entries;
  entry_bytes_ += add->entry_bytes;
  for (const auto& [key, loc] : add->overflow) overflow_.emplace(key, loc);
  while (size_ > (kSplitAt << block_bits_) && block_bits_ < kMaxBlockBits) Split();
}

bool CompactIndex::ReplaceIf(uint64_t key, uint32_t from, uint32_t to) {
  if (uint32_t* o = Overflowed(key)) {
    if (*o != from) return false;
    *o = to;
    return true;
  }
  const uint64_t tag = TagOf(key);
  const Slot s = Locate(tag);
  if (!s.found || Location(LoadEntry(s.block->data, s.at)) != from) return false;
  StoreEntry(s.block->data, s.at, tag & kFingerprintMask, to);
  return true;
}

void CompactIndex::Erase(uint64_t key, uint32_t* loc) {
  if (!overflow_.empty()) {
    auto it = overflow_.find(key);
    if (it != overflow_.end()) {
      *loc = it->second;
      overflow_.erase(it);
      return;
    }
  }
  const Slot s = Locate(TagOf(key));
  assert(s.found);
  Block* b = s.block;
  uint8_t* d = b->data;
  *loc = Location(LoadEntry(d, s.at));
  std::memmove(d + size_t{s.at} * kEntryBytes, d + (size_t{s.at} + 1) * kEntryBytes,
               size_t{b->count - s.at - 1} * kEntryBytes);
  --b->count;
  --size_;
}

void CompactIndex::Insert(const Slot& s, uint64_t tag, uint32_t loc) {
  Block* b = s.block;
  if (b->count == b->cap) {
    MoveToOwnArray(b, CapacityFor(b->cap), &entry_bytes_);
    DisbandIfAbandoned(PartOf(b), &entry_bytes_);
  }
  uint8_t* d = b->data;
  std::memmove(d + (size_t{s.at} + 1) * kEntryBytes, d + size_t{s.at} * kEntryBytes,
               size_t{b->count - s.at} * kEntryBytes);
  StoreEntry(d, s.at, tag & kFingerprintMask, loc);
  ++b->count;
}

// Entries past a block's count are never read but by the masked load of the last one.
std::unique_ptr<uint8_t[]> CompactIndex::Allocate(size_t cap) {
  return std::make_unique_for_overwrite<uint8_t[]>(cap * kEntryBytes + kLoadPadding);
}

void CompactIndex::MoveToOwnArray(Block* b, uint32_t cap, int64_t* bytes) {
  uint8_t* data = Allocate(cap).release();
  if (b->count > 0) std::memcpy(data, b->data, size_t{b->count} * kEntryBytes);
  AdoptOwnArray(b, data, cap, bytes);
}

void CompactIndex::AdoptOwnArray(Block* b, uint8_t* data, uint32_t cap, int64_t* bytes) {
  if (!b->own && b->cap > 0) abandoned_[PartOf(b)] += size_t{b->cap} * kEntryBytes;
  FreeOwnArray(b, bytes);
  b->data = data;
  b->cap = cap;
  b->own = 1;
  *bytes += static_cast<int64_t>(size_t{cap} * kEntryBytes + kLoadPadding);
}

void CompactIndex::FreeOwnArray(Block* b, int64_t* bytes) {
  if (!b->own) return;
  delete[] b->data;
  *bytes -= static_cast<int64_t>(size_t{b->cap} * kEntryBytes + kLoadPadding);
  b->own = 0;
}

// Block i becomes blocks 2i and 2i+1 by the fingerprint bit below the block bits; entries
// stay sorted, so each half is a prefix or suffix of the old array. The halves get arrays
// of their own of their exact size (the next dense batch lays them out in arenas, an
// insert regrows one), part by part, each part's arena freed when done, so that the index
// is never held twice.
void CompactIndex::Split() {
  const uint64_t bit = uint64_t{1} << (kTagBits - block_bits_ - 1);
  std::vector<Block> next(blocks_.size() * 2);
  entry_bytes_ = 0;  // counted again as the halves are made
  for (size_t p = 0; p < kParts; ++p) {
    const auto [first, end] = PartBlocks(p);
    for (size_t i = first; i < end; ++i) {
      Block& old = blocks_[i];
      uint32_t cut = 0;
      while (cut < old.count && !(Fingerprint(LoadEntry(old.data, cut)) & bit)) ++cut;
      const uint32_t parts[2][2] = {{0, cut}, {cut, old.count}};
      for (int half = 0; half < 2; ++half) {
        Block& nb = next[2 * i + half];
        nb.data = old.data + size_t{parts[half][0]} * kEntryBytes;  // read in place by the move
        nb.count = parts[half][1] - parts[half][0];
        if (nb.count > 0) MoveToOwnArray(&nb, nb.count, &entry_bytes_);  // exact: an insert regrows it
        if (nb.count == 0) nb.data = nullptr;
      }
      int64_t freed = 0;
      FreeOwnArray(&old, &freed);
    }
    arenas_[p] = PartArena();
    abandoned_[p] = 0;
  }
  blocks_ = std::move(next);
  ++block_bits_;
}

void CompactIndex::ForEachLocation(const std::function<void(uint32_t loc)>& fn) const {
  for (const Block& b : blocks_) {
    for (uint32_t i = 0; i < b.count; ++i) fn(Location(LoadEntry(b.data, i)));
  }
  for (const auto& [key, loc] : overflow_) fn(loc);
}

double CompactIndex::PeakBytesPerKey(int threads) {
  constexpr double kHeld = 7.9;
  return kHeld * (1 + static_cast<double>(std::clamp<size_t>(threads, 1, kParts)) / kParts);
}

size_t CompactIndex::bytes() const {
  return blocks_.size() * sizeof(Block) + static_cast<size_t>(entry_bytes_) + overflow_.size() * kOverflowNodeBytes +
         (overflow_.empty() ? 0 : overflow_.bucket_count() * sizeof(void*));
}

}  // namespace strata::ssd
