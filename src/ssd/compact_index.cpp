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
// Capacity for n entries: a sixteenth (at least 4 entries) of slack, about 3% of the bytes.
uint32_t CapacityFor(uint32_t n) { return n + std::max<uint32_t>(4, n / 16); }
uint32_t Location(uint64_t entry) { return static_cast<uint32_t>(entry); }

}  // namespace

CompactIndex::CompactIndex() : blocks_(size_t{1} << kMinBlockBits), block_bits_(kMinBlockBits) {}

// Fingerprints are uniform over the block's range, so the entry's rank is close to its
// proportional position: start there and step (a few entries, one or two cache lines).
CompactIndex::Slot CompactIndex::Locate(uint64_t tag) const {
  Block* b = const_cast<Block*>(&BlockOf(tag));
  const uint64_t fp = tag & kFingerprintMask;
  const uint8_t* d = b->data.get();
  uint32_t at = StartOf(*b, tag);
  while (at > 0 && Fingerprint(LoadEntry(d, at - 1)) >= fp) --at;
  while (at < b->count && Fingerprint(LoadEntry(d, at)) < fp) ++at;
  const bool found = at < b->count && Fingerprint(LoadEntry(d, at)) == fp;
  return Slot{b, at, found};
}

const CompactIndex::Block& CompactIndex::BlockOf(uint64_t tag) const { return blocks_[tag >> (kTagBits - block_bits_)]; }

// The fingerprint bits below the block bits, scaled to the block's count.
uint32_t CompactIndex::StartOf(const Block& b, uint64_t tag) const {
  const int low_bits = kTagBits - block_bits_;
  return static_cast<uint32_t>(((tag & ((uint64_t{1} << low_bits) - 1)) * b.count) >> low_bits);
}

void CompactIndex::PrefetchHeader(uint64_t key) const { __builtin_prefetch(&BlockOf(TagOf(key))); }

void CompactIndex::PrefetchEntries(uint64_t key) const {
  const uint64_t tag = TagOf(key);
  const Block& b = BlockOf(tag);
  if (b.count > 0) __builtin_prefetch(b.data.get() + size_t{StartOf(b, tag)} * kEntryBytes);
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
  *loc = Location(LoadEntry(s.block->data.get(), s.at));
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
  constexpr size_t kParts = 16;  // ranges of blocks, shared out over the threads
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
    adds[task - 2] = MergePart(task - 2, kParts, batch, grouped);
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

// Part p of `parts` equal ranges of blocks, each block with keys merged in one walk. It
// visits only those blocks, going from one's keys to the next's, so a sparse batch (a
// few keys per hundred blocks) costs its keys, not the index's blocks; the blocks a few
// visits ahead are loaded meanwhile.
CompactIndex::Additions CompactIndex::MergePart(size_t p, size_t parts, const Batch& batch, Grouped& grouped) {
  constexpr size_t kBlocksAhead = 8;
  const std::vector<uint32_t>& begin = grouped.begin;
  Pending* pending = grouped.pending.data();
  const int low_bits = kTagBits - block_bits_;
  const auto block_of = [&](size_t k) { return static_cast<size_t>(pending[k].tag >> low_bits); };
  const auto next = [&](size_t k) { return size_t{begin[block_of(k) + 1]}; };  // the next block's first key
  const size_t first = begin[blocks_.size() * p / parts], end = begin[blocks_.size() * (p + 1) / parts];
  size_t ahead = first;  // the first key of the next block to load
  for (size_t i = 0; i < kBlocksAhead && ahead < end; ++i, ahead = next(ahead)) PrefetchBlock(blocks_[block_of(ahead)]);
  PartScratch scratch;
  for (size_t k = first; k < end; k = next(k)) {
    if (ahead < end) {
      PrefetchBlock(blocks_[block_of(ahead)]);
      ahead = next(ahead);
    }
    MergeIntoBlock(&blocks_[block_of(k)], batch, pending + k, next(k) - k, &scratch);
  }
  return std::move(scratch.add);
}

void CompactIndex::PrefetchBlock(const Block& b) { PrefetchSpan(b.data.get(), size_t{b.count} * kEntryBytes); }

// The block's upserts in one walk: pending (one block's keys, in the batch's order) sorted
// by fingerprint, ties kept in order. The leading keys that are stored update their entries
// in place (UpdateInPlace); the rest are merged with the block's entries into the part's
// scratch array, in order: the entries below each key's fingerprint are copied as the walk
// passes them, and the key then takes the entry of its fingerprint (the block's, or an
// earlier batch key's) or a new one. The merged entries then go back into the block's
// array, or into a regrown one when the block gained more than its room.
void CompactIndex::MergeIntoBlock(Block* b, const Batch& batch, Pending* pending, size_t m, PartScratch* scratch) {
  SortByFingerprint(pending, m);
  const size_t updated = UpdateInPlace(b, batch, pending, m);
  pending += updated;
  m -= updated;
  if (m == 0) return;
  const uint32_t count = b->count;
  std::vector<uint8_t>& merged = scratch->merged;
  if (merged.size() < (count + m) * kEntryBytes + kLoadPadding) merged.resize((count + m) * kEntryBytes + kLoadPadding);
  uint8_t* out = merged.data();
  const uint8_t* d = b->data.get();
  uint32_t j = 0, o = 0, inserted = 0;  // the block's entries [0, j) are in out[0, o)
  for (const Pending& q : std::span(pending, m)) {
    const size_t i = q.i;
    if (q.indexed && UpdateOverflowed(batch, q)) continue;
    const uint32_t fp = static_cast<uint32_t>(q.tag & kFingerprintMask);
    for (; j < count; ++j, ++o) {
      const uint64_t e = LoadEntry(d, j);
      if (Fingerprint(e) > fp) break;
      std::memcpy(out + size_t{o} * kEntryBytes, &e, sizeof(e));  // the 8th byte is the next entry's to write
    }
    if (o > 0 && Fingerprint(LoadEntry(out, o - 1)) == fp) {
      if (!q.indexed) {  // another key holds this fingerprint
        scratch->add.overflow.emplace_back(batch.keys[i], q.loc);
      } else {  // key's own entry, or an earlier batch key's, which key takes as Upsert would
        batch.had[i] = 1;
        batch.old[i] = Location(LoadEntry(out, o - 1));
        StoreEntry(out, o - 1, fp, q.loc);
      }
    } else {
      StoreEntry(out, o++, fp, q.loc);
      ++inserted;
    }
  }
  if (j < count) std::memcpy(out + size_t{o} * kEntryBytes, d + size_t{j} * kEntryBytes, size_t{count - j} * kEntryBytes);
  o += count - j;
  if (o == 0) return;  // an empty block whose keys all overflowed
  if (o > b->cap) {
    const uint32_t old_cap = b->cap;
    scratch->arrays.Give(old_cap, Adopt(b, scratch->arrays.Take(o), o, &scratch->add.entry_bytes));
  }
  std::memcpy(b->data.get(), out, size_t{o} * kEntryBytes);
  b->count = o;
  scratch->add.entries += inserted;
}

// The keys (sorted) of a block that are indexed, and so by Upsert's contract there, change
// only their entries' locations: found by one walk and set in place, with no copy. Stops at
// the first key that is not indexed or not found and returns its place (m when none is),
// leaving the rest for the merge.
size_t CompactIndex::UpdateInPlace(Block* b, const Batch& batch, const Pending* pending, size_t m) {
  uint8_t* d = b->data.get();
  uint32_t at = 0;
  for (size_t k = 0; k < m; ++k) {
    const Pending& q = pending[k];
    if (!q.indexed) return k;
    const size_t i = q.i;
    if (UpdateOverflowed(batch, q)) continue;
    const uint64_t fp = q.tag & kFingerprintMask;
    while (at < b->count && Fingerprint(LoadEntry(d, at)) < fp) ++at;
    if (at == b->count || Fingerprint(LoadEntry(d, at)) != fp) return k;
    batch.had[i] = 1;
    batch.old[i] = Location(LoadEntry(d, at));
    StoreEntry(d, at, fp, q.loc);
  }
  return m;
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
  *old = Location(LoadEntry(s.block->data.get(), s.at));
  StoreEntry(s.block->data.get(), s.at, tag & kFingerprintMask, loc);
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
  if (!s.found || Location(LoadEntry(s.block->data.get(), s.at)) != from) return false;
  StoreEntry(s.block->data.get(), s.at, tag & kFingerprintMask, to);
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
  uint8_t* d = b->data.get();
  *loc = Location(LoadEntry(d, s.at));
  std::memmove(d + size_t{s.at} * kEntryBytes, d + (size_t{s.at} + 1) * kEntryBytes,
               size_t{b->count - s.at - 1} * kEntryBytes);
  --b->count;
  --size_;
}

void CompactIndex::Insert(const Slot& s, uint64_t tag, uint32_t loc) {
  Block* b = s.block;
  if (b->count == b->cap) Reserve(b, CapacityFor(b->cap));
  uint8_t* d = b->data.get();
  std::memmove(d + (size_t{s.at} + 1) * kEntryBytes, d + size_t{s.at} * kEntryBytes,
               size_t{b->count - s.at} * kEntryBytes);
  StoreEntry(d, s.at, tag & kFingerprintMask, loc);
  ++b->count;
}

void CompactIndex::Reserve(Block* b, uint32_t cap) {
  std::unique_ptr<uint8_t[]> data = Allocate(cap);
  if (b->count > 0) std::memcpy(data.get(), b->data.get(), size_t{b->count} * kEntryBytes);
  Adopt(b, std::move(data), cap, &entry_bytes_);
}

// Entries past a block's count are never read but by the masked load of the last one.
std::unique_ptr<uint8_t[]> CompactIndex::Allocate(uint32_t cap) {
  return std::make_unique_for_overwrite<uint8_t[]>(size_t{cap} * kEntryBytes + kLoadPadding);
}

std::unique_ptr<uint8_t[]> CompactIndex::Adopt(Block* b, std::unique_ptr<uint8_t[]> data, uint32_t cap,
                                                int64_t* bytes) {
  const auto array_bytes = [](uint32_t c) { return static_cast<int64_t>(size_t{c} * kEntryBytes + kLoadPadding); };
  *bytes += array_bytes(cap);
  if (b->data != nullptr) *bytes -= array_bytes(b->cap);
  b->cap = cap;
  return std::exchange(b->data, std::move(data));
}

std::unique_ptr<uint8_t[]> CompactIndex::Recycler::Take(uint32_t cap) {
  if (cap >= free_.size() || free_[cap].empty()) return Allocate(cap);
  std::unique_ptr<uint8_t[]> data = std::move(free_[cap].back());
  free_[cap].pop_back();
  return data;
}

void CompactIndex::Recycler::Give(uint32_t cap, std::unique_ptr<uint8_t[]> data) {
  if (data == nullptr || cap >= kMaxCap) return;  // freed here
  if (cap >= free_.size()) free_.resize(cap + 1);
  free_[cap].push_back(std::move(data));
}

// Block i becomes blocks 2i and 2i+1 by the fingerprint bit below the block bits; entries
// stay sorted, so each half is a prefix or suffix of the old array.
void CompactIndex::Split() {
  const uint64_t bit = uint64_t{1} << (kTagBits - block_bits_ - 1);
  std::vector<Block> next(blocks_.size() * 2);
  entry_bytes_ = 0;  // counted again as the halves are reserved
  for (size_t i = 0; i < blocks_.size(); ++i) {
    Block& old = blocks_[i];
    uint32_t cut = 0;
    while (cut < old.count && !(Fingerprint(LoadEntry(old.data.get(), cut)) & bit)) ++cut;
    const uint32_t parts[2][2] = {{0, cut}, {cut, old.count}};
    for (int half = 0; half < 2; ++half) {
      const uint32_t n = parts[half][1] - parts[half][0];
      if (n == 0) continue;
      Block& nb = next[2 * i + half];
      Reserve(&nb, CapacityFor(n));
      std::memcpy(nb.data.get(), old.data.get() + size_t{parts[half][0]} * kEntryBytes, size_t{n} * kEntryBytes);
      nb.count = n;
    }
    old.data.reset();  // one block's copy at a time, not the whole index twice
  }
  blocks_ = std::move(next);
  ++block_bits_;
}

void CompactIndex::ForEachLocation(const std::function<void(uint32_t loc)>& fn) const {
  for (const Block& b : blocks_) {
    for (uint32_t i = 0; i < b.count; ++i) fn(Location(LoadEntry(b.data.get(), i)));
  }
  for (const auto& [key, loc] : overflow_) fn(loc);
}

size_t CompactIndex::bytes() const {
  return blocks_.size() * sizeof(Block) + static_cast<size_t>(entry_bytes_) + overflow_.size() * kOverflowNodeBytes +
         (overflow_.empty() ? 0 : overflow_.bucket_count() * sizeof(void*));
}

}  // namespace strata::ssd
