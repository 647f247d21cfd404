// SSD-PS crash safety: a forked child runs a seeded stream of Put/Sync/CompactNow with the
// background compactor on and is SIGKILLed at a seeded random point; the parent reopens
// the directory and checks it holds exactly the model state of the last completed Sync
// (or of the Sync in flight at the kill, whose completion the child could not report).
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <random>
#include <set>

#include "ssd_test_util.h"

namespace strata::ssd_test {
namespace {

constexpr size_t kRowBytes = 40;
constexpr int kMaxOps = 3000;

struct Op {
  enum Kind { kPut, kSync, kCompact } kind;
  std::vector<uint64_t> keys;
  uint64_t version;
};

// The op stream both processes derive from one seed.
class OpStream {
 public:
  explicit OpStream(uint64_t seed) : rng_(seed) {}
  Op Next() {
    const int what = static_cast<int>(rng_() % 100);
    if (what < 25) return {Op::kSync, {}, 0};
    if (what < 30) return {Op::kCompact, {}, 0};
    std::set<uint64_t> keys;
    const size_t n = 1 + rng_() % 120;
    while (keys.size() < n) keys.insert(rng_() % 2500);
    return {Op::kPut, std::vector<uint64_t>(keys.begin(), keys.end()), ++version_};
  }

 private:
  std::mt19937_64 rng_;
  uint64_t version_ = 0;
};

[[noreturn]] void RunChild(const SsdOptions& opts, uint64_t seed, int report_fd) {
  std::unique_ptr<SsdStore> store;
  if (!OpenSsdStore(opts, &store).ok()) _exit(2);
  OpStream ops(seed);
  uint64_t syncs = 0;
  for (int i = 0; i < kMaxOps; ++i) {
    const Op op = ops.Next();
    Status st;
    if (op.kind == Op::kPut) {
      std::vector<uint8_t> rows(op.keys.size() * kRowBytes);
      for (size_t j = 0; j < op.keys.size(); ++j) {
        std::memcpy(rows.data() + j * kRowBytes, RowFor(op.keys[j], op.version, kRowBytes).data(), kRowBytes);
      }
      st = store->Put(op.keys.data(), op.keys.size(), rows.data());
    } else if (op.kind == Op::kSync) {
      st = store->Sync();
      if (st.ok()) {
        ++syncs;
        if (::write(report_fd, &syncs, sizeof(syncs)) != sizeof(syncs)) _exit(3);
      }
    } else {
      st = store->CompactNow();
    }
    if (!st.ok()) _exit(4);
  }
  _exit(0);
}

// Model states after Sync number `k` and `k + 1` of the stream.
void ModelAtSyncs(uint64_t seed, uint64_t k, Model* at_k, Model* at_next) {
  OpStream ops(seed);
  Model model;
  uint64_t syncs = 0;
  for (int i = 0; i < kMaxOps && syncs <= k; ++i) {
    const Op op = ops.Next();
    if (op.kind == Op::kPut) {
      for (uint64_t key : op.keys) model[key] = RowFor(key, op.version, kRowBytes);
    } else if (op.kind == Op::kSync) {
      ++syncs;
      if (syncs == k) *at_k = model;
      if (syncs == k + 1) *at_next = model;
    }
  }
  if (syncs <= k) *at_next = model;  // the stream ended: nothing after sync k
}

bool Matches(SsdStore& store, const Model& model) {
  if (store.num_keys() != model.size()) return false;
  std::vector<uint64_t> keys;
  for (const auto& kv : model) keys.push_back(kv.first);
  std::vector<uint8_t> rows(keys.size() * kRowBytes), found(keys.size());
  if (!store.Get(keys.data(), keys.size(), rows.data(), found.data()).ok()) return false;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!found[i] || std::memcmp(rows.data() + i * kRowBytes, model.at(keys[i]).data(), kRowBytes) != 0) return false;
  }
  return true;
}

}  // namespace

// Kill points: seeds 1..60, or STRATA_CRASH_POINTS of them from STRATA_CRASH_SEED (default
// 1) for a longer campaign (`make crash CRASH_POINTS=1000`).
TEST_CASE("ssd: kill -9 at random instants recovers exactly the last completed sync") {
  const char* points_env = std::getenv("STRATA_CRASH_POINTS");
  const char* seed_env = std::getenv("STRATA_CRASH_SEED");
  const uint64_t points = points_env ? std::strtoull(points_env, nullptr, 10) : 60;
  const uint64_t first = seed_env ? std::strtoull(seed_env, nullptr, 10) : 1;
  int synced_states = 0;
  for (uint64_t seed = first; seed < first + points; ++seed) {
    CAPTURE(seed);
    TempDir dir;
    SsdOptions opts = SmallOptions(dir.store(), kRowBytes);
    int from_child = -1;
    const pid_t pid = ForkChild(&from_child, [&](int to_parent) { RunChild(opts, seed, to_parent); });
    // Kill point: after a seeded number of reported syncs plus a seeded delay, so it
    // lands anywhere in the stream however fast the machine runs.
    std::mt19937_64 rng(seed * 7919);
    const uint64_t target = rng() % 40;
    uint64_t syncs = 0, v = 0;
    while (syncs < target && ::read(from_child, &v, sizeof(v)) == sizeof(v)) syncs = v;
    ::usleep(static_cast<useconds_t>(rng() % 3000));
    ::kill(pid, SIGKILL);
    int wstatus = 0;
    REQUIRE(::waitpid(pid, &wstatus, 0) == pid);
    REQUIRE_MESSAGE((WIFSIGNALED(wstatus) || WEXITSTATUS(wstatus) == 0),
                    "child failed with exit code " << WEXITSTATUS(wstatus));
    while (::read(from_child, &v, sizeof(v)) == sizeof(v)) syncs = v;
    ::close(from_child);

    Model at_k, at_next;
    ModelAtSyncs(seed, syncs, &at_k, &at_next);
    opts.background_compaction = false;
    auto store = OpenOrDie(opts);
    const bool ok_k = Matches(*store, at_k);
    const bool ok_next = !ok_k && Matches(*store, at_next);
    CHECK_MESSAGE((ok_k || ok_next), "recovered state is neither sync " << syncs << " nor " << syncs + 1);
    synced_states += syncs > 0;
    // The recovered store keeps working: compact, write, sync, reopen.
    REQUIRE(store->CompactNow().ok());
    Model model = ok_k ? at_k : at_next;
    PutRows(*store, {1, 2, 3}, 1u << 30, &model);
    for (auto& kv : model) kv.second.resize(kRowBytes);
    REQUIRE(store->Sync().ok());
    store.reset();
    store = OpenOrDie(opts);
    CHECK(Matches(*store, model));
  }
  CHECK(synced_states > static_cast<int>(points / 2));  // most kill points lie after some syncs
  MESSAGE("SSD-PS crash points: ", points, " (seeds ", first, "..", first + points - 1, "), ", synced_states,
          " after at least one sync; every recovery was exactly sync k or k+1");
}

}  // namespace strata::ssd_test
