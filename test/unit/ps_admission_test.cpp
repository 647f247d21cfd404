// Admission (strata/ps/admission.h): a key is admitted in the pass its count reaches the
// minimum; counts saturate; the totals and the snapshot of an earlier pass undo the passes
// pulled after it; Load restores a snapshot; a pending key unseen for the eviction's passes
// is forgotten the same whether or not later passes were pulled first; and the table
// agrees with a std::map through many inserts and admissions (its backward-shift deletion
// keeps every probe run whole).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "strata/ps/admission.h"

namespace strata {
namespace {

// Asks one key in `pass`; true when admitted.
bool AdmitOne(Admission* a, int pass, uint64_t key, uint32_t examples) {
  uint8_t admitted = 0;
  a->Admit(pass, &key, &examples, 1, &admitted);
  return admitted != 0;
}

std::map<uint64_t, int> SnapshotMap(const Admission& a, int through) {
  std::vector<uint64_t> keys;
  std::vector<uint8_t> counts;
  std::vector<uint32_t> last;
  a.Snapshot(through, &keys, &counts, &last);
  std::map<uint64_t, int> m;
  for (size_t i = 0; i < keys.size(); ++i) m[keys[i]] = counts[i];
  return m;
}

TEST_CASE("ps: admission admits a key in the pass its examples reach the minimum") {
  Admission a(3);
  CHECK_FALSE(AdmitOne(&a, 0, 7, 1));
  CHECK_FALSE(AdmitOne(&a, 1, 7, 1));
  CHECK(AdmitOne(&a, 2, 7, 1));        // 3 examples in all
  CHECK(AdmitOne(&a, 2, 8, 5));        // 5 examples of one pass are enough at once
  CHECK_FALSE(AdmitOne(&a, 2, 9, 2));
  CHECK(a.TotalsThrough(2).admitted == 2);
  CHECK(a.TotalsThrough(2).pending == 1);
  CHECK(SnapshotMap(a, 2) == std::map<uint64_t, int>{{9, 2}});
}

TEST_CASE("ps: admission counts saturate instead of wrapping") {
  Admission a(kMaxAdmitMinCount);
  CHECK_FALSE(AdmitOne(&a, 0, 1, 200));
  CHECK(AdmitOne(&a, 1, 1, 4000000000u));  // 200 + 4e9 saturates at the minimum, 255
  Admission b(kMaxAdmitMinCount);
  CHECK_FALSE(AdmitOne(&b, 0, 1, 254));
  CHECK(SnapshotMap(b, 0) == std::map<uint64_t, int>{{1, 254}});
}

TEST_CASE("ps: admission totals and snapshots of a pass undo the passes pulled after it") {
  Admission a(2);
  CHECK_FALSE(AdmitOne(&a, 0, 1, 1));
  CHECK_FALSE(AdmitOne(&a, 0, 2, 1));
  // Passes 1 and 2 are pulled ahead before pass 0's checkpoint.
  CHECK(AdmitOne(&a, 1, 1, 1));
  CHECK_FALSE(AdmitOne(&a, 1, 3, 1));
  CHECK(AdmitOne(&a, 2, 2, 4));
  CHECK(AdmitOne(&a, 2, 3, 1));
  CHECK(a.TotalsThrough(0).admitted == 0);
  CHECK(a.TotalsThrough(0).pending == 2);
  CHECK(a.TotalsThrough(1).admitted == 1);
  CHECK(a.TotalsThrough(1).pending == 2);
  CHECK(a.TotalsThrough(2).admitted == 3);
  CHECK(a.TotalsThrough(2).pending == 0);
  CHECK(SnapshotMap(a, 0) == std::map<uint64_t, int>{{1, 1}, {2, 1}});
  CHECK(SnapshotMap(a, 1) == std::map<uint64_t, int>{{2, 1}, {3, 1}});
  CHECK(SnapshotMap(a, 2).empty());
  // Releasing a pass keeps what the later ones can undo.
  a.Release(0);
  CHECK(SnapshotMap(a, 1) == std::map<uint64_t, int>{{2, 1}, {3, 1}});
  CHECK(a.TotalsThrough(1).pending == 2);

  Admission resumed(2);
  const std::vector<uint64_t> keys = {2, 3};
  const std::vector<uint8_t> counts = {1, 1};
  const std::vector<uint32_t> last = {0, 1};
  resumed.Load(keys.data(), counts.data(), last.data(), keys.size());
  CHECK(resumed.TotalsThrough(1).pending == 2);
  CHECK(AdmitOne(&resumed, 2, 2, 4));
  CHECK(AdmitOne(&resumed, 2, 3, 1));
}

TEST_CASE("ps: admission forgets a pending key not seen for the eviction's passes, however the passes run ahead") {
  // Unseen for 2 passes: a key last counted in pass L is forgotten after pass L + 2.
  for (bool ahead : {false, true}) {
    CAPTURE(ahead);
    Admission a(3, 2);
    CHECK_FALSE(AdmitOne(&a, 0, 5, 1));
    CHECK_FALSE(AdmitOne(&a, 0, 6, 1));
    a.Release(0);
    CHECK_FALSE(AdmitOne(&a, 1, 6, 1));  // 6 seen again: 2 so far
    a.Release(1);
    // Pass 3 may be pulled before pass 2 is released: 5 (last counted in 0) is dead after
    // pass 2 either way, so in pass 3 it counts from zero.
    if (!ahead) a.Release(2);
    CHECK_FALSE(AdmitOne(&a, 3, 5, 2));  // 0 + 2: not 1 + 2
    CHECK(AdmitOne(&a, 3, 6, 1));        // 2 + 1, still remembered
    if (ahead) {
      CHECK(a.TotalsThrough(2).pending == 1);  // 5 is dead after pass 2: only 6 was pending
      a.Release(2);
    }
    CHECK(a.TotalsThrough(2).pending == 1);
    CHECK(SnapshotMap(a, 2) == std::map<uint64_t, int>{{6, 2}});
    CHECK(SnapshotMap(a, 3) == std::map<uint64_t, int>{{5, 2}});
    a.Release(3);
    CHECK(a.TotalsThrough(3).pending == 1);
    a.Release(5);  // 5, last counted in 3, is dead after pass 5 and freed
    CHECK(a.TotalsThrough(5).pending == 0);
    CHECK(a.TotalsThrough(5).admitted == 1);
  }
}

TEST_CASE("ps: admission's table agrees with a map through growth and many admissions") {
  Admission a(4);
  std::map<uint64_t, int> pending;  // the model: counts of keys not yet admitted
  std::vector<uint8_t> has_row(20000, 0);
  std::mt19937_64 rng(11);
  for (int pass = 0; pass < 40; ++pass) {
    std::vector<uint64_t> ids;  // distinct keys without a row, as a pull asks them
    for (int i = 0; i < 3000; ++i) {
      const uint64_t id = rng() % has_row.size();
      if (!has_row[id]) ids.push_back(id);
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    std::vector<uint64_t> keys(ids.size());  // spread over the key space
    for (size_t i = 0; i < ids.size(); ++i) keys[i] = ids[i] * 0x9e3779b97f4a7c15ULL;
    std::vector<uint32_t> examples(keys.size());
    for (uint32_t& e : examples) e = 1 + static_cast<uint32_t>(rng() % 2);
    std::vector<uint8_t> admitted(keys.size());
    a.Admit(pass, keys.data(), examples.data(), keys.size(), admitted.data());
    for (size_t i = 0; i < keys.size(); ++i) {
      const int count = pending[keys[i]] + static_cast<int>(examples[i]);
      REQUIRE(static_cast<bool>(admitted[i]) == (count >= 4));
      if (count >= 4) {
        pending.erase(keys[i]);
        has_row[ids[i]] = 1;
      } else {
        pending[keys[i]] = count;
      }
    }
    a.Release(pass);
  }
  CHECK(SnapshotMap(a, 39) == pending);
  CHECK(a.TotalsThrough(39).pending == static_cast<int64_t>(pending.size()));
  CHECK(a.bytes() >= pending.size() * 9);
}

}  // namespace
}  // namespace strata
