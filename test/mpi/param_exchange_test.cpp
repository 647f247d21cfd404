// ParamExchange over ShardServers and DenseReducer under real mpirun: each rank builds
// seeded data whose job-wide result it can compute alone, and the check's outcome is
// agreed across ranks.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>

#include "../common/all_true.h"
#include "../common/counting_store.h"
#include "../common/pulled_rows.h"
#include "strata/comm/byte_all_to_all.h"
#include "strata/comm/param_exchange.h"
#include "strata/comm/wire.h"
#include "strata/common/partition.h"
#include "strata/common/row.h"
#include "strata/model/optimizer.h"

namespace strata {
namespace {

constexpr int kDim = 4;

ModelSpec Spec() {
  ModelSpec m;
  m.embedding_dim = kDim;
  return m;
}

// The keys worker w touches: a shared set every worker uses plus a private range.
std::vector<uint64_t> WorkerKeys(int w) {
  std::vector<uint64_t> keys;
  for (uint64_t k = 1; k <= 50; ++k) keys.push_back(k * 7919);
  for (uint64_t k = 0; k < 30; ++k) keys.push_back(1000000 + static_cast<uint64_t>(w) * 100 + k);
  return keys;
}

float GradOf(int w, uint64_t key, int d) { return static_cast<float>((key % 13) + w + 0.25 * d); }

// The distinct keys of this rank's G workers.
std::vector<uint64_t> RankKeys(int rank, int G) {
  std::set<uint64_t> keys;
  for (int g = 0; g < G; ++g) for (uint64_t k : WorkerKeys(rank * G + g)) keys.insert(k);
  return {keys.begin(), keys.end()};
}

// A shard server over a CountingStore whose owned rows encode (key, owner) in their first
// two floats, so a requester can check who answered.
struct Owner {
  test::CountingStore* store;
  std::unique_ptr<ShardServer> server;
};

Owner MakeOwner(const Comm& comm, int G) {
  const RowLayout layout(kDim, kDim);
  auto store = std::make_unique<test::CountingStore>(layout.bytes());
  std::vector<uint8_t> row(layout.bytes());
  for (int r = 0; r < comm.size(); ++r) {
    for (uint64_t k : RankKeys(r, G)) {
      if (OwnerRank(k, comm.size()) != comm.rank()) continue;
      InitRow(Spec(), k, row.data());
      RowLayout::Embedding(row.data())[0] = static_cast<float>(k % 100000);
      RowLayout::Embedding(row.data())[1] = static_cast<float>(comm.rank());
      REQUIRE(store->Put(&k, 1, row.data()).ok());
    }
  }
  store->ClearCounts();
  Owner o{store.get(), nullptr};
  o.server = std::make_unique<ShardServer>(Spec(), std::move(store), nullptr);
  return o;
}

// A step's gradients of rank `rank`'s G workers: worker w sends GradOf(w, key) for each
// of WorkerKeys(w), once each.
struct StepGradients {
  StepGradients(int rank, int G) : keys(G), grads(G), counts(G) {
    for (int g = 0; g < G; ++g) {
      const int w = rank * G + g;
      keys[g] = WorkerKeys(w);
      for (uint64_t k : keys[g]) {
        for (int d = 0; d < kDim; ++d) grads[g].push_back(GradOf(w, k, d));
        counts[g].push_back(1);
      }
    }
  }
  std::vector<SparseGradView> views() const {
    std::vector<SparseGradView> v;
    for (size_t g = 0; g < keys.size(); ++g) v.push_back({keys[g].data(), grads[g].data(), counts[g].data(), keys[g].size()});
    return v;
  }
  std::vector<std::vector<uint64_t>> keys;
  std::vector<std::vector<float>> grads;
  std::vector<std::vector<uint32_t>> counts;
};

// The pull's keys are this rank's, grouped by owner, none held, each row its owner's.
bool PulledAsOwned(const Comm& comm, const std::vector<uint64_t>& mine, const PassRouting& routing,
                   const std::vector<uint8_t>& held, const std::vector<uint8_t>& rows, size_t rb) {
  const int ranks = comm.size();
  const std::vector<uint64_t>& got = routing.keys();
  bool ok = std::set<uint64_t>(got.begin(), got.end()) == std::set<uint64_t>(mine.begin(), mine.end()) &&
            got.size() == mine.size() && routing.pass() == 0;
  for (size_t i = 1; i < got.size(); ++i) ok &= OwnerRank(got[i - 1], ranks) <= OwnerRank(got[i], ranks);
  for (size_t i = 0; i < got.size(); ++i) {
    ok &= held[i] == 0;  // no earlier pass is in flight
    const float* f = RowLayout::Embedding(&rows[i * rb]);
    ok &= f[0] == static_cast<float>(got[i] % 100000) && f[1] == static_cast<float>(OwnerRank(got[i], ranks));
  }
  return ok;
}

// The summed gradients of this rank's keys are the closed-form sums over the job's W
// workers (each worker sends GradOf(w, key) for its keys), with their counts.
bool SumsInClosedForm(const std::vector<uint64_t>& mine, int W, const std::vector<uint64_t>& keys,
                      const std::vector<float>& grads, const std::vector<uint32_t>& counts) {
  bool ok = std::set<uint64_t>(keys.begin(), keys.end()) == std::set<uint64_t>(mine.begin(), mine.end()) &&
            keys.size() == mine.size();
  for (size_t i = 0; i < keys.size(); ++i) {
    std::vector<int> users;
    for (int w = 0; w < W; ++w) {
      const std::vector<uint64_t> wk = WorkerKeys(w);
      if (std::find(wk.begin(), wk.end(), keys[i]) != wk.end()) users.push_back(w);
    }
    ok &= counts[i] == users.size();
    for (int d = 0; d < kDim; ++d) {
      float want = 0;
      for (int w : users) want += GradOf(w, keys[i], d);
      ok &= grads[i * kDim + d] == want;
    }
  }
  return ok;
}

// The lower bound in closed form: this rank's keys owned elsewhere asked and answered once,
// each of its owned keys home once unless it pulled the key too, and the step's distinct
// remote keys' gradients once each way.
uint64_t LowerBoundOf(const Comm& comm, int G, const StepGradients& step, size_t rb) {
  const int ranks = comm.size(), me = comm.rank();
  uint64_t want = 0;
  for (uint64_t k : RankKeys(me, G)) want += OwnerRank(k, ranks) != me ? sizeof(uint64_t) + rb : 0;
  std::map<uint64_t, std::set<int>> pullers;
  for (int r = 0; r < ranks; ++r) for (uint64_t k : RankKeys(r, G)) pullers[k].insert(r);
  for (const auto& [k, who] : pullers) want += OwnerRank(k, ranks) == me && !who.count(me) ? rb : 0;
  std::set<uint64_t> touched;
  for (const auto& ks : step.keys) for (uint64_t k : ks) if (OwnerRank(k, ranks) != me) touched.insert(k);
  return want + touched.size() * 2 * (sizeof(uint64_t) + sizeof(float) * kDim);
}

TEST_CASE("mpi: pull serves owner rows, reduce sums every worker once, push returns once") {
  Comm comm;
  const int G = 2, ranks = comm.size(), W = ranks * G;
  Owner owner = MakeOwner(comm, G);
  ParamExchange ex(&comm, owner.server.get());
  const std::vector<uint64_t> mine = RankKeys(comm.rank(), G);
  const size_t rb = owner.server->row_bytes();

  PassRouting routing;
  PulledRows pulled;
  std::vector<uint8_t> held;
  REQUIRE(ex.Pull(0, mine, {}, &pulled, &held, &routing).ok());
  const std::vector<uint8_t> rows = test::FlatRows(pulled, routing.keys(), rb);
  CHECK(test::AllTrue(&comm, PulledAsOwned(comm, mine, routing, held, rows, rb)));

  const StepGradients step(comm.rank(), G);
  std::vector<uint64_t> keys;
  std::vector<float> grads;
  std::vector<uint32_t> counts;
  REQUIRE(ex.ReduceGradients(routing, step.views(), &keys, &grads, &counts).ok());
  CHECK(test::AllTrue(&comm, SumsInClosedForm(mine, W, keys, grads, counts)));

  // Push-back: every pulled key comes home exactly once.
  REQUIRE(ex.PushBack(routing, test::ExportFrom(routing.keys(), rows, rb)).ok());
  uint64_t stored = 0;
  REQUIRE(owner.server->NumKeys(&stored).ok());  // applies the buffered write-back
  bool ok = true;
  for (auto [k, times] : owner.store->puts()) ok &= times == 1 && OwnerRank(k, ranks) == comm.rank();
  int64_t total[1] = {static_cast<int64_t>(owner.store->puts().size())};
  REQUIRE(comm.AllreduceSum(total, 1).ok());
  std::set<uint64_t> all;
  for (int w = 0; w < W; ++w) for (uint64_t k : WorkerKeys(w)) all.insert(k);
  CHECK(test::AllTrue(&comm, ok));
  CHECK(total[0] == static_cast<int64_t>(all.size()));

  // The lower bound, never above what was sent.
  CHECK(ex.lower_bound_bytes() == LowerBoundOf(comm, G, step, rb));
  int64_t bytes[2] = {static_cast<int64_t>(ex.lower_bound_bytes()), static_cast<int64_t>(comm.bytes_sent())};
  REQUIRE(comm.AllreduceSum(bytes, 2).ok());
  CHECK(bytes[0] <= bytes[1]);
  CHECK((ranks == 1 || bytes[0] > 0));
}

TEST_CASE("mpi: a pull flags rows an earlier pass holds until that pass is home") {
  Comm comm;
  const int G = 1;
  Owner owner = MakeOwner(comm, G);
  ParamExchange ex(&comm, owner.server.get());
  const std::vector<uint64_t> mine = RankKeys(comm.rank(), G);
  // Pass 0 holds the shared keys of every rank; pass 1 asks for them again.
  std::vector<uint64_t> shared(mine.begin(), mine.begin() + 50);
  std::sort(shared.begin(), shared.end());
  const size_t rb = owner.server->row_bytes();
  PassRouting first, second, third;
  PulledRows pulled;
  std::vector<uint8_t> held;
  REQUIRE(ex.Pull(0, shared, {}, &pulled, &held, &first).ok());
  std::vector<uint8_t> rows0 = test::FlatRows(pulled, first.keys(), rb);
  REQUIRE(ex.Pull(1, mine, {}, &pulled, &held, &second).ok());
  std::vector<uint8_t> rows1 = test::FlatRows(pulled, second.keys(), rb);
  const std::vector<uint64_t>& keys = second.keys();  // mine, grouped by owner
  bool ok = true;
  for (size_t i = 0; i < keys.size(); ++i) {
    const bool in_first = std::binary_search(shared.begin(), shared.end(), keys[i]);
    ok &= held[i] == (in_first ? 1 : 0);
  }
  CHECK(test::AllTrue(&comm, ok));
  // A read-only pull flags nothing and routes nothing. Pass 2 still sees the rows pass 1
  // holds; once passes 0 and 1 are home, pass 3 sees none, and the rows they pushed.
  std::vector<uint64_t> read_keys = mine;
  REQUIRE(ex.PullReadOnly(&read_keys, &pulled).ok());
  CHECK(test::AllTrue(&comm, read_keys == keys && test::FlatRows(pulled, read_keys, rb) == rows1));
  REQUIRE(ex.PushBack(first, test::ExportFrom(first.keys(), rows0, rb)).ok());
  REQUIRE(ex.Pull(2, mine, {}, &pulled, &held, &third).ok());
  CHECK(test::AllTrue(&comm, std::count(held.begin(), held.end(), 1) == static_cast<long>(mine.size())));
  // Pass 1 trains its rows; pass 2, refreshed, ends with the same rows; both go home.
  for (size_t i = 0; i < keys.size(); ++i) RowLayout::Embedding(&rows1[i * rb])[2] += 1.0f;
  REQUIRE(ex.PushBack(second, test::ExportFrom(keys, rows1, rb)).ok());
  REQUIRE(ex.PushBack(third, test::ExportFrom(keys, rows1, rb)).ok());
  PassRouting fourth;
  REQUIRE(ex.Pull(3, mine, {}, &pulled, &held, &fourth).ok());
  CHECK(test::AllTrue(&comm, std::count(held.begin(), held.end(), 1) == 0 &&
                           fourth.keys() == keys && test::FlatRows(pulled, keys, rb) == rows1));
}

TEST_CASE("mpi: announce reaches each owner's server, and an owner's error comes back after the collective") {
  Comm comm;
  Owner owner = MakeOwner(comm, 1);
  ParamExchange ex(&comm, owner.server.get());
  // Without a MEM-PS an announcement is accepted and changes nothing a pull returns.
  const std::vector<uint64_t> mine = RankKeys(comm.rank(), 1);
  REQUIRE(ex.Announce(0, mine).ok());
  const size_t rb = owner.server->row_bytes();
  PassRouting routing;
  PulledRows pulled, again;
  std::vector<uint8_t> held;
  REQUIRE(ex.Pull(0, mine, {}, &pulled, &held, &routing).ok());
  std::vector<uint64_t> read_keys = mine;
  REQUIRE(ex.PullReadOnly(&read_keys, &again).ok());
  CHECK(test::AllTrue(&comm, read_keys == routing.keys() &&
                           test::FlatRows(pulled, read_keys, rb) == test::FlatRows(again, read_keys, rb)));
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
  CHECK(test::AllTrue(&comm, ok));
  // A ring all-reduce's share: 2 (R - 1) / R of the vector.
  CHECK(reducer.lower_bound_bytes() == 2 * (comm.size() - 1) * n * sizeof(float) / comm.size());
}

// A transport of its own over the same ranks (a duplicate communicator), counting its calls.
class CountingTransport final : public ByteAllToAll {
 public:
  explicit CountingTransport(const Comm& comm) { REQUIRE(comm.Duplicate(&dup_).ok()); }
  Status AllToAllBytes(const char* send, const std::vector<int64_t>& counts,
                       std::vector<std::string_view>* recv) override {
    ++calls;
    return dup_->AllToAllBytes(send, counts, recv);
  }
  uint64_t bytes_sent() const override { return dup_->bytes_sent(); }
  int calls = 0;

 private:
  std::unique_ptr<Comm> dup_;
};

TEST_CASE("mpi: a step's records go over the step transport set, with the same sums") {
  Comm comm;
  const int G = 2;
  Owner owner = MakeOwner(comm, G);
  ParamExchange ex(&comm, owner.server.get());
  PassRouting routing;
  PulledRows pulled;
  std::vector<uint8_t> held;
  REQUIRE(ex.Pull(0, RankKeys(comm.rank(), G), {}, &pulled, &held, &routing).ok());
  const StepGradients step(comm.rank(), G);
  std::vector<uint64_t> keys[2];
  std::vector<float> grads[2];
  std::vector<uint32_t> counts[2];
  REQUIRE(ex.ReduceGradients(routing, step.views(), &keys[0], &grads[0], &counts[0]).ok());
  CountingTransport transport(comm);
  ex.SetStepTransport(&transport);
  const uint64_t mpi_before = comm.bytes_sent();
  REQUIRE(ex.ReduceGradients(routing, step.views(), &keys[1], &grads[1], &counts[1]).ok());
  CHECK(transport.calls == (comm.size() == 1 ? 0 : 2));  // one rank sums without exchanging
  CHECK(comm.bytes_sent() == mpi_before);  // none of the step's records went over comm
  CHECK((comm.size() == 1 || transport.bytes_sent() > 0));
  CHECK(test::AllTrue(&comm, keys[1] == keys[0] && grads[1] == grads[0] && counts[1] == counts[0]));
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

// Records packed in rank order reach their ranks in emission order, as views of the
// Comm's buffer; a part over the kept buffer's bound arrives whole too.
TEST_CASE("mpi: GradRecords through AllToAllBytes arrive in order, small and large") {
  Comm comm;
  const int R = comm.size(), dim = 3;
  for (const size_t per_rank : {size_t{5}, size_t{(20u << 20) / GradRecords::RecordBytes(dim)}}) {
    GradRecords records;
    records.Pack(R, dim, [&](const auto& emit) {
      for (size_t i = 0; i < per_rank; ++i) {
        for (int to = R - 1; to >= 0; --to) {  // interleaved: the packer sorts by rank
          const float g[dim] = {float(comm.rank()), float(to), float(i)};
          emit(to, uint64_t(i) * 1000 + to, uint32_t(comm.rank()), g);
        }
      }
    });
    const uint64_t sent_before = comm.bytes_sent();
    std::vector<std::string_view> arrived;
    REQUIRE(comm.AllToAllBytes(records.data(), records.byte_counts(), &arrived).ok());
    CHECK(comm.bytes_sent() - sent_before == (R - 1) * per_rank * GradRecords::RecordBytes(dim));
    bool ok = arrived.size() == static_cast<size_t>(R);
    for (int from = 0; ok && from < R; ++from) {
      ok &= arrived[from].size() == per_rank * GradRecords::RecordBytes(dim);
      wire::Reader in(arrived[from]);
      for (size_t i = 0; ok && i < per_rank; ++i) {
        ok &= in.Get<uint64_t>() == uint64_t(i) * 1000 + comm.rank();
        ok &= in.Get<uint32_t>() == uint32_t(from);
        const float* g = reinterpret_cast<const float*>(in.Take(dim * sizeof(float)));
        ok &= g[0] == float(from) && g[1] == float(comm.rank()) && g[2] == float(i);
      }
    }
    CHECK(test::AllTrue(&comm, ok));
  }
}

// One rank with a part over MPI's int counts (2 GiB): every rank gets the same error, and
// the communicator still works afterwards (no rank was left inside a collective).
TEST_CASE("mpi: an all-to-all over 2 GiB on one rank fails on every rank") {
  Comm comm;
  if (comm.size() == 1) {  // a rank alone moves nothing over MPI, so nothing to refuse
    MESSAGE("one rank: skipping");
    return;
  }
  std::vector<std::string> send(comm.size());
  if (comm.rank() == 0) send[1].assign(size_t{1} << 31, 'x');
  std::vector<std::string> recv;
  const Status st = comm.AllToAll(std::move(send), &recv);
  CHECK(st.code() == Status::Code::kCommError);
  CHECK(st.message().find("over MPI's 2 GiB") != std::string::npos);
  std::vector<std::string> small(comm.size(), std::string(3, 'y'));
  REQUIRE(comm.AllToAll(small, &recv).ok());
  CHECK(recv.size() == static_cast<size_t>(comm.size()));
}

}  // namespace
}  // namespace strata
