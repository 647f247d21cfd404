// PassRefresh under real mpirun: the held rows of a pass are refreshed from this rank's
// previous pass where it trained them (found by walking both passes' keys in routing order,
// which groups them by owner rank) and pulled again from their owners where only other
// ranks did; either way the staged rows are the previous pass's final ones.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "../common/all_true.h"
#include "../common/pulled_rows.h"
#include "strata/comm/param_exchange.h"
#include "strata/common/row.h"
#include "strata/hbm/hbm_ps.h"
#include "strata/model/optimizer.h"
#include "strata/ps/shard_server.h"
#include "strata/store/row_store.h"
#include "train/pass_data.h"
#include "train/pass_refresh.h"

namespace strata {
namespace {

// A pass's keys on rank r: a range every rank shares, and one of its own.
std::vector<uint64_t> PassKeys(uint64_t shared_from, uint64_t shared_to, int r) {
  std::vector<uint64_t> keys;
  for (uint64_t k = shared_from; k <= shared_to; ++k) keys.push_back(k * 7919);
  for (uint64_t k = 0; k < 10; ++k) keys.push_back(1000000 + static_cast<uint64_t>(r) * 100 + k);
  std::sort(keys.begin(), keys.end());
  return keys;
}

struct Rank {
  Comm comm;
  ModelSpec spec;
  std::unique_ptr<ShardServer> server;
  std::unique_ptr<HbmPs> hbm;
  std::unique_ptr<ParamExchange> exchange;

  Rank() {
    spec.embedding_dim = 4;
    server = std::make_unique<ShardServer>(spec, NewMemoryRowStore(RowLayoutOf(spec).bytes()), nullptr);
    HbmOptions o;
    o.spec = spec;
    o.max_batch = 16;
    hbm = NewHostHbmPs(o);
    exchange = std::make_unique<ParamExchange>(&comm, server.get());
  }
  size_t rb() const { return server->row_bytes(); }

  // Pulls `keys` as `pass` and stages them.
  void PullAndStage(int pass, const std::vector<uint64_t>& keys, PassData* p) {
    REQUIRE(exchange->Pull(pass, keys, {}, &p->rows, &p->held, &p->routing).ok());
    REQUIRE(hbm->BeginStage(pass, keys.size()).ok());
    const std::vector<uint8_t> rows = test::FlatRows(p->rows, p->routing.keys(), rb());
    REQUIRE(hbm->Stage(p->routing.keys().data(), keys.size(), rows.data()).ok());
  }

  std::vector<uint8_t> Active(const std::vector<uint64_t>& keys) {
    std::vector<uint8_t> rows(keys.size() * rb());
    REQUIRE(hbm->Export(keys.data(), keys.size(), rows.data()).ok());
    return rows;
  }
};

TEST_CASE("mpi: a refresh copies the held rows this rank trained and pulls again those only others did") {
  Rank rank;
  const int me = rank.comm.rank(), ranks = rank.comm.size();
  // Pass 1 shares keys 40..60 with pass 0 on every rank, and asks for the next rank's own
  // keys of pass 0 besides its own.
  std::vector<uint64_t> second = PassKeys(40, 80, me), next_own = PassKeys(1, 0, (me + 1) % ranks);
  second.insert(second.end(), next_own.begin(), next_own.end());
  std::sort(second.begin(), second.end());
  second.erase(std::unique(second.begin(), second.end()), second.end());
  PassData p0, p1;
  rank.PullAndStage(0, PassKeys(1, 60, me), &p0);
  REQUIRE(rank.hbm->SwapIn().ok());
  // Training stands in: every rank adds 1 to each row's first float, so replicas agree.
  std::vector<uint8_t> trained = rank.Active(p0.routing.keys());
  for (size_t i = 0; i < p0.routing.size(); ++i) RowLayout::Embedding(&trained[i * rank.rb()])[0] += 1.0f;
  REQUIRE(rank.hbm->Insert(p0.routing.keys().data(), p0.routing.size(), trained.data()).ok());
  rank.PullAndStage(1, second, &p1);  // while pass 0 is in flight: its keys are held
  REQUIRE(rank.exchange->PushBack(p0.routing, test::ExportFrom(p0.routing.keys(), trained, rank.rb())).ok());

  PassRefresh refresh;
  refresh.Remember(p0.routing.keys());
  const std::vector<uint64_t> keys = p1.routing.keys();
  REQUIRE(refresh.Apply(&p1, rank.hbm.get(), rank.exchange.get(), &rank.comm).ok());
  // Held: pass 0's shared keys (1..60) and every rank's own keys. Copied: those this rank
  // trained (40..60 and its own); pulled: the next rank's own.
  CHECK(test::AllTrue(&rank.comm, refresh.copied() == 31 && refresh.pulled() == (ranks > 1 ? 10u : 0u)));

  // Each held row is the pass's final one; a key no pass held starts from its initial row.
  REQUIRE(rank.hbm->SwapIn().ok());
  const std::vector<uint8_t> now = rank.Active(keys);
  std::vector<uint8_t> want(rank.rb());
  bool ok = true;
  for (size_t i = 0; i < keys.size(); ++i) {
    InitRow(rank.spec, keys[i], want.data());
    const bool held = keys[i] <= 60 * 7919 || keys[i] >= 1000000;
    if (held) RowLayout::Embedding(want.data())[0] += 1.0f;
    ok &= std::memcmp(&now[i * rank.rb()], want.data(), rank.rb()) == 0;
  }
  CHECK(test::AllTrue(&rank.comm, ok));
}

}  // namespace
}  // namespace strata
