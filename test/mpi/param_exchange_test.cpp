// ParamExchange and DenseReducer under real mpirun: each rank builds seeded data whose
// job-wide result it can compute alone, and the check's outcome is agreed across ranks.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>

#include "strata/comm/param_exchange.h"
#include "strata/common/partition.h"

namespace strata {
namespace {

constexpr int kDim = 4;
constexpr size_t kRowBytes = kDim * sizeof(float);

// The keys worker w touches: a shared set every worker uses plus a private range.
std::vector<uint64_t> WorkerKeys(int w) {
  std::vector<uint64_t> keys;
  for (uint64_t k = 1; k <= 50; ++k) keys.push_back(k * 7919);
  for (uint64_t k = 0; k < 30; ++k) keys.push_back(1000000 + static_cast<uint64_t>(w) * 100 + k);
  return keys;
}

float GradOf(int w, uint64_t key, int d) { return static_cast<float>((key % 13) + w + 0.25 * d); }

// A rank agrees with every other on whether the local check held.
bool AllTrue(Comm* comm, bool ok) {
  int64_t bad[1] = {ok ? 0 : 1};
  REQUIRE(comm->AllreduceSum(bad, 1).ok());
  return bad[0] == 0;
}

TEST_CASE("mpi: pull serves owner rows, reduce sums every worker once, push returns once") {
  Comm comm;
  const int G = 2, ranks = comm.size();
  ParamExchange ex(&comm, kRowBytes, kDim);
  std::set<uint64_t> mine_set;
  for (int g = 0; g < G; ++g) for (uint64_t k : WorkerKeys(comm.rank() * G + g)) mine_set.insert(k);
  std::vector<uint64_t> mine(mine_set.begin(), mine_set.end());

  // Owner rows encode (key, owner) so the requester can check who answered.
  std::vector<uint64_t> served;
  RowServer serve = [&](const uint64_t* keys, size_t n, uint8_t* rows, uint8_t* flags) {
    for (size_t i = 0; i < n; ++i) {
      served.push_back(keys[i]);
      flags[i] = static_cast<uint8_t>(keys[i] % 3);
      float* f = reinterpret_cast<float*>(rows + i * kRowBytes);
      f[0] = static_cast<float>(keys[i] % 100000);
      f[1] = static_cast<float>(comm.rank());
      f[2] = f[3] = 0;
    }
    return Status::OK();
  };
  PassRouting routing;
  std::vector<uint8_t> rows, flags;
  REQUIRE(ex.Pull(mine, serve, &rows, &flags, &routing).ok());
  bool ok = true;
  for (size_t i = 0; i < mine.size(); ++i) {
    ok &= flags[i] == mine[i] % 3;
    const float* f = reinterpret_cast<const float*>(&rows[i * kRowBytes]);
    ok &= f[0] == static_cast<float>(mine[i] % 100000) && f[1] == static_cast<float>(OwnerRank(mine[i], ranks));
  }
  for (uint64_t k : served) ok &= OwnerRank(k, ranks) == comm.rank();
  CHECK(AllTrue(&comm, ok));

  // Each local worker sends GradOf(w, key) for its keys; the sum over all W workers of
  // the job is known in closed form.
  std::vector<std::vector<uint64_t>> keys(G);
  std::vector<std::vector<float>> grads(G);
  std::vector<std::vector<uint32_t>> counts(G);
  std::vector<SparseGradView> views;
  for (int g = 0; g < G; ++g) {
    const int w = comm.rank() * G + g;
    keys[g] = WorkerKeys(w);
    for (uint64_t k : keys[g]) {
      for (int d = 0; d < kDim; ++d) grads[g].push_back(GradOf(w, k, d));
      counts[g].push_back(1);
    }
  }
  for (int g = 0; g < G; ++g) views.push_back({keys[g].data(), grads[g].data(), counts[g].data(), keys[g].size()});
  std::vector<uint64_t> out_keys;
  std::vector<float> out_grads;
  std::vector<uint32_t> out_counts;
  REQUIRE(ex.ReduceGradients(routing, views, &out_keys, &out_grads, &out_counts).ok());
  ok = std::set<uint64_t>(out_keys.begin(), out_keys.end()) == mine_set && out_keys.size() == mine.size();
  const int W = ranks * G;
  for (size_t i = 0; i < out_keys.size(); ++i) {
    std::vector<int> users;
    for (int w = 0; w < W; ++w) {
      auto wk = WorkerKeys(w);
      if (std::find(wk.begin(), wk.end(), out_keys[i]) != wk.end()) users.push_back(w);
    }
    ok &= out_counts[i] == users.size();
    for (int d = 0; d < kDim; ++d) {
      float want = 0;
      for (int w : users) want += GradOf(w, out_keys[i], d);
      ok &= out_grads[i * kDim + d] == want;
    }
  }
  CHECK(AllTrue(&comm, ok));

  // Push-back: every pulled key comes home exactly once.
  std::map<uint64_t, int> stored;
  REQUIRE(ex.PushBack(routing, rows.data(), [&](const uint64_t* k, size_t n, const uint8_t*) {
    for (size_t i = 0; i < n; ++i) ++stored[k[i]];
    return Status::OK();
  }).ok());
  ok = true;
  for (auto [k, times] : stored) ok &= times == 1 && OwnerRank(k, ranks) == comm.rank();
  int64_t total[1] = {static_cast<int64_t>(stored.size())};
  REQUIRE(comm.AllreduceSum(total, 1).ok());
  std::set<uint64_t> all;
  for (int w = 0; w < W; ++w) for (uint64_t k : WorkerKeys(w)) all.insert(k);
  CHECK(AllTrue(&comm, ok));
  CHECK(total[0] == static_cast<int64_t>(all.size()));
}

TEST_CASE("mpi: announce tells each owner exactly its keys, once per requesting rank") {
  Comm comm;
  const int ranks = comm.size();
  ParamExchange ex(&comm, kRowBytes, kDim);
  const std::vector<uint64_t> mine = WorkerKeys(comm.rank());
  std::multiset<uint64_t> told;
  REQUIRE(ex.Announce(mine, [&](const uint64_t* keys, size_t n) {
    told.insert(keys, keys + n);
    return Status::OK();
  }).ok());
  std::multiset<uint64_t> want;
  for (int r = 0; r < ranks; ++r) {
    for (uint64_t k : WorkerKeys(r)) {
      if (OwnerRank(k, ranks) == comm.rank()) want.insert(k);
    }
  }
  CHECK(AllTrue(&comm, told == want));
  // An owner's error comes back from its Announce, after the only collective, so no rank
  // is left waiting.
  Status st = ex.Announce(mine, [&](const uint64_t*, size_t) {
    return comm.rank() == 0 ? Status::IOError("pin failed") : Status::OK();
  });
  CHECK(comm.AgreeOn(st).message().find("pin failed") != std::string::npos);
}

TEST_CASE("mpi: dense reduce is the worker-ordered sum, identical on every rank") {
  Comm comm;
  const int G = 3;
  const size_t n = 1001;  // not a multiple of the rank count
  std::vector<std::vector<float>> local(G, std::vector<float>(n));
  std::vector<const float*> views;
  for (int g = 0; g < G; ++g) {
    const int w = comm.rank() * G + g;
    for (size_t i = 0; i < n; ++i) local[g][i] = 1.0f / static_cast<float>(w + 1 + i % 7);
    views.push_back(local[g].data());
  }
  std::vector<float> sum(n);
  DenseReducer reducer(&comm, n);
  REQUIRE(reducer.Reduce(views, sum.data()).ok());
  bool ok = true;
  for (size_t i = 0; i < n; ++i) {
    float want = 0;
    for (int w = 0; w < comm.size() * G; ++w) {
      const float v = 1.0f / static_cast<float>(w + 1 + i % 7);
      want = w == 0 ? v : want + v;
    }
    ok &= sum[i] == want;  // bitwise: the order is fixed
  }
  CHECK(AllTrue(&comm, ok));
}

TEST_CASE("mpi: AgreeOn carries the lowest failing rank's error to every rank") {
  Comm comm;
  Status local = comm.rank() == comm.size() - 1 ? Status::NotFound("rank-local file gone") : Status::OK();
  Status agreed = comm.AgreeOn(local);
  CHECK(!agreed.ok());
  CHECK(agreed.code() == Status::Code::kNotFound);
  CHECK(agreed.message().find("rank-local file gone") != std::string::npos);
  CHECK(comm.AgreeOn(Status::OK()).ok());
}

}  // namespace
}  // namespace strata
