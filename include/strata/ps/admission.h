// Admission: feature admission on a key's owner rank (--admit-min-count N). A key gets a row
// only once N examples have held it, counted job-wide: each pass's pull hands the owner how
// many examples of the pass hold each key it has no row for (summed over the ranks that
// ask), and the owner adds them to the key's count. The key is admitted in the pass whose
// examples bring its count to N (it trains from the first step of that pass); until then it
// is pending: its embedding is zero and it receives no update.
//
// The counts are exact, not a sketch. A sketch's collisions are between keys that share a
// counter, and which keys share one depends on how keys are split over ranks; exact counts
// keep admission, and so every result, bitwise independent of the ranks x workers split.
// The table is compact: 8 bytes of key, 1 of count and 4 of the last pass counted a pending
// key, open addressing at a load factor of at most 0.75 (about 17-35 bytes a pending key,
// against a 72-byte row).
//
// Passes are pulled ahead of training (the pipeline), so the table runs ahead of the model.
// Every pass's changes are logged until its rows are home (Release); the totals and the
// snapshot a checkpoint takes are of the table as it stood after a given pass, with the
// changes of later passes pulled ahead undone, so they do not depend on the pipeline.
//
// With unseen_passes N > 0 (--evict-unseen-passes), a pending key not seen for N passes is
// forgotten as an unseen row is evicted: a key last counted in pass L is dead after pass p
// when L + N <= p. Admit of pass q counts a key dead after q - 1 from zero, the totals and
// snapshots leave out the keys dead after their pass, and Release(p) frees the entries
// dead after p; so the table stays bounded on an endless stream of new keys, and whether a
// key was forgotten never depends on when its entry was freed.
//
// Thread safety: every call is safe from any thread (one internal lock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace strata {

// Counts saturate here; --admit-min-count may not exceed it.
constexpr int kMaxAdmitMinCount = 255;

// Admission's totals as of the end of a pass.
struct AdmissionTotals {
  int64_t admitted = 0;  // keys admitted by this ledger (since it was created or loaded)
  int64_t pending = 0;   // keys counted but not admitted
};

class Admission {
 public:
  // REQUIRES: 1 <= min_count <= kMaxAdmitMinCount; unseen_passes >= 0 (0: never forget).
  explicit Admission(int min_count, int unseen_passes = 0);

  // Keys (n) that have no row, each asked once in `pass`, held by examples[i] examples of
  // it: admitted[i] out, 1 when the key gets its row in this pass. REQUIRES: passes come in
  // ascending order, and a key is asked at most once a pass.
  void Admit(int pass, const uint64_t* keys, const uint32_t* examples, size_t n, uint8_t* admitted);

  // Every row of `pass` and of the passes before it is home: their logs are dropped, and
  // the entries of keys dead after `pass` freed.
  void Release(int pass);

  // The totals after pass `through` (later passes' changes undone).
  AdmissionTotals TotalsThrough(int through) const;

  // The pending keys after pass `through`, with their counts and the last pass that counted
  // each, in no particular order.
  void Snapshot(int through, std::vector<uint64_t>* keys, std::vector<uint8_t>* counts,
                std::vector<uint32_t>* last) const;

  // Resume: adds pending keys with their counts and last passes. REQUIRES: no pass logged yet.
  void Load(const uint64_t* keys, const uint8_t* counts, const uint32_t* last, size_t n);

  // DRAM the table takes now, as allocated.
  size_t bytes() const;

 private:
  // A key's entry: its count (0: absent) and the last pass that counted it.
  struct Entry {
    uint8_t count = 0;
    uint32_t last = 0;
  };
  // What a pass changed, so it can be undone: each key's entry before it.
  struct PassLog {
    std::vector<uint64_t> keys;
    std::vector<Entry> before;
    int64_t admitted = 0;
  };

  bool Dead(const Entry& e, int after_pass) const {
    return unseen_ > 0 && static_cast<int64_t>(e.last) + unseen_ <= after_pass;
  }
  // Open addressing with linear probing; count 0 marks an empty slot.
  Entry Get(uint64_t key) const;
  void Set(uint64_t key, Entry e);  // count 0 erases (backward-shift deletion)
  void EraseAt(size_t slot);
  size_t Home(uint64_t key) const;
  void Grow();
  // Calls fn(key, entry) for each pending key alive after pass `through`. REQUIRES: mu_ held.
  template <typename Fn>
  void ForEachThrough(int through, Fn&& fn) const;

  const int min_count_;
  const int unseen_;
  mutable std::mutex mu_;
  std::vector<uint64_t> keys_;    // protected by mu_
  std::vector<uint8_t> counts_;   // protected by mu_; (keys_.size()), 0: an empty slot
  std::vector<uint32_t> last_;    // protected by mu_; (keys_.size())
  size_t size_ = 0;               // protected by mu_
  int64_t admitted_ = 0;          // protected by mu_: every logged pass applied
  std::map<int, PassLog> logs_;   // protected by mu_: passes pulled, not yet released
};

}  // namespace strata
