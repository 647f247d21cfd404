// CachePolicy: eviction order (least frequent first, newest first among equals; known next
// uses last, farthest first), pins held across passes and for absent keys, and pass
// counting, on hand-made traces; PopVictim and PopVictims against a full sweep on random ones.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "strata/mem/cache_policy.h"

namespace strata {
namespace {

std::vector<uint64_t> DrainVictims(CachePolicy* p) {
  std::vector<uint64_t> order;
  CachePolicy::Victim v;
  while (p->PopVictim(&v)) order.push_back(v.key);
  return order;
}

TEST_CASE("mem: policy evicts least frequent first, newest first among equals") {
  CachePolicy p;
  p.BeginPass(0);
  // key: frequency  1:5  2:1  3:3  4:1  5:3 ; touched in key order.
  const uint64_t freq[] = {0, 5, 1, 3, 1, 3};
  for (uint64_t k = 1; k <= 5; ++k) p.Touch(p.Insert(k), freq[k]);
  CachePolicy::Victim v;
  REQUIRE(p.PopVictim(&v));
  CHECK(v.key == 4);  // freq 1, touched after key 2
  CHECK(v.handle == 3);  // handles are dense, in insertion order
  CHECK(p.Find(4) == CachePolicy::kNone);
  // A later touch raises key 2 above the rest.
  p.Touch(p.Find(2), 9);
  CHECK(DrainVictims(&p) == std::vector<uint64_t>{5, 3, 1, 2});
  CHECK(p.size() == 0);
}

TEST_CASE("mem: policy never evicts pinned rows until their last pass is unpinned") {
  CachePolicy p;
  p.BeginPass(0);
  for (uint64_t k = 1; k <= 4; ++k) p.Touch(p.Insert(k), 1);
  p.Pin(p.Find(1), 0);
  p.Pin(p.Find(2), 0);
  p.Pin(p.Find(2), 1);  // also in the prefetched pass
  CHECK(p.pinned_rows() == 2);
  CHECK(DrainVictims(&p) == std::vector<uint64_t>{4, 3});
  p.UnpinPass(0);
  CHECK(p.pinned(p.Find(2)));
  CHECK(DrainVictims(&p) == std::vector<uint64_t>{1});
  p.UnpinPass(1);
  CHECK(DrainVictims(&p) == std::vector<uint64_t>{2});
}

TEST_CASE("mem: policy orders rows by next use, and pins of absent keys wait for them") {
  CachePolicy p;
  p.BeginPass(0);
  // key: frequency  1:5  2:1  3:3  4:2 ; all touched in pass 0.
  const uint64_t freq[] = {0, 5, 1, 3, 2};
  for (uint64_t k = 1; k <= 4; ++k) p.Touch(p.Insert(k), freq[k]);
  p.PinKey(1, 0);  // pinned for the pass it was touched in: no use ahead
  p.PinKey(2, 2);
  p.PinKey(3, 1);
  p.PinKey(9, 1);  // not cached yet
  CHECK(p.pinned_rows() == 3);
  CachePolicy::Victim v;
  REQUIRE(p.PopVictim(&v));
  CHECK(v.key == 4);
  CHECK_FALSE(p.PopVictim(&v));  // the rest are pinned
  // Held to a capacity, pinned rows go too: no use ahead first (by frequency), then the
  // farthest use (pass 2 before pass 1).
  std::vector<uint64_t> order;
  while (p.PopVictim(&v, CachePolicy::Pins::kMayEvict)) order.push_back(v.key);
  CHECK(order == std::vector<uint64_t>{1, 2, 3});
  // Evicted pinned rows and absent keys are pinned when (re)inserted.
  CHECK(p.pinned(p.Insert(2)));
  CHECK(p.pinned(p.Insert(9)));
  CHECK_FALSE(p.pinned(p.Insert(5)));
  p.UnpinPass(0);
  p.UnpinPass(1);
  CHECK_FALSE(p.pinned(p.Find(9)));
  CHECK(p.pinned(p.Find(2)));
  p.UnpinPass(2);
  CHECK(p.pinned_rows() == 0);
}

TEST_CASE("mem: policy pin sets span a window of passes anywhere in the run") {
  CachePolicy p;
  p.BeginPass(500);  // a resumed run: no pass below 500 was ever unpinned here
  CachePolicy::Handle far = p.Insert(1), near = p.Insert(2);
  p.Touch(far, 1);
  p.Touch(near, 1);
  p.Pin(far, 500);
  p.Pin(far, 500 + CachePolicy::kPinWindow - 1);
  p.Pin(near, 500);
  p.Pin(near, 501);
  CachePolicy::Victim v;
  REQUIRE(p.PopVictim(&v, CachePolicy::Pins::kMayEvict));
  CHECK(v.key == 1);  // next used 63 passes from now, key 2 in the next one
  p.UnpinPass(500);
  CHECK(p.pinned(p.Find(2)));
  p.UnpinPass(501);
  CHECK_FALSE(p.pinned(p.Find(2)));
}

TEST_CASE("mem: policy PassCount counts each pass once and handles are reused") {
  CachePolicy p;
  p.BeginPass(3);
  CachePolicy::Handle h = p.Insert(7);
  CHECK(p.PassCount(h) == 1);
  p.Touch(h, p.PassCount(h));
  CHECK(p.PassCount(h) == 1);  // a second touch in pass 3 does not count
  p.BeginPass(4);
  CHECK(p.PassCount(h) == 2);
  CachePolicy::Victim v;
  REQUIRE(p.PopVictim(&v));
  CachePolicy::Handle again = p.Insert(8);
  CHECK(again == h);  // the freed entry is reused, fresh
  CHECK(p.freq(again) == 0);
  CHECK(p.key(again) == 8);
}

TEST_CASE("mem: policy renumbers touch stamps when they run out, keeping the order") {
  // Two policies see the same touches; one renumbers its stamps every few touches.
  CachePolicy plain, wrapped;
  wrapped.set_stamp_limit(7);
  for (CachePolicy* p : {&plain, &wrapped}) {
    p->BeginPass(0);
    for (uint64_t k = 1; k <= 6; ++k) p->Touch(p->Insert(k), k % 2);
    for (uint64_t k : {3, 1, 5, 2}) p->Touch(p->Find(k), 1);
    p->Touch(p->Insert(9), 0);
  }
  CHECK(DrainVictims(&wrapped) == DrainVictims(&plain));
}

// Random touches, pins and unpins of a few hundred keys, applied alike to policies that
// evict in different ways: the victims must be the same rows.
class PolicyTwins {
 public:
  explicit PolicyTwins(uint64_t seed) : rng_(seed) {}

  // One random step on both: a touch (inserting when absent), a pin or a new pass.
  void Step(CachePolicy* a, CachePolicy* b) {
    const uint64_t key = rng_() % 300, freq = rng_() % 5;
    const int what = static_cast<int>(rng_() % 20);
    for (CachePolicy* p : {a, b}) {
      if (what == 0) {
        p->UnpinPass(pass_);
        p->BeginPass(pass_ + 1);
      } else if (what < 4) {
        p->PinKey(key, pass_ + 1 + static_cast<int>(freq % 3));
      } else {
        CachePolicy::Handle h = p->Find(key);
        if (h == CachePolicy::kNone) h = p->Insert(key);
        p->Touch(h, freq);
      }
    }
    if (what == 0) ++pass_;
  }

 private:
  std::mt19937_64 rng_;
  int pass_ = 0;
};

TEST_CASE("mem: policy PopVictim one at a time is exact: the same rows as a full sweep each time") {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    CAPTURE(seed);
    for (CachePolicy::Pins pins : {CachePolicy::Pins::kKeep, CachePolicy::Pins::kMayEvict}) {
      CachePolicy popped, swept;
      PolicyTwins twins(seed);
      std::vector<CachePolicy::Victim> victims;
      for (int step = 0; step < 20000; ++step) {
        twins.Step(&popped, &swept);
        while (popped.size() > 120) {
          CachePolicy::Victim v;
          const bool got = popped.PopVictim(&v, pins);
          victims.clear();
          swept.PopVictims(1, pins, &victims);
          REQUIRE(got == (victims.size() == 1));
          if (!got || v.key != victims[0].key) {
            CHECK(!got);  // every row pinned
            break;
          }
        }
      }
      CHECK(popped.size() == swept.size());
    }
  }
}

TEST_CASE("mem: policy PopVictims(n) takes the rows n PopVictim calls would") {
  for (uint64_t seed = 11; seed <= 15; ++seed) {
    CAPTURE(seed);
    CachePolicy one, bulk;
    PolicyTwins twins(seed);
    std::vector<CachePolicy::Victim> victims;
    for (int step = 0; step < 20000; ++step) {
      twins.Step(&one, &bulk);
      if (step % 500 != 499) continue;
      const size_t n = one.size() / 3;
      std::vector<uint64_t> expected, got;
      CachePolicy::Victim v;
      for (size_t i = 0; i < n && one.PopVictim(&v); ++i) expected.push_back(v.key);
      victims.clear();
      bulk.PopVictims(n, CachePolicy::Pins::kKeep, &victims);
      for (const CachePolicy::Victim& w : victims) got.push_back(w.key);
      std::sort(expected.begin(), expected.end());
      std::sort(got.begin(), got.end());
      CHECK(got == expected);
    }
  }
}

}  // namespace
}  // namespace strata
