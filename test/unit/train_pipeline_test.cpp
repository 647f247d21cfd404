// The training layer's stages with one rank (MPI as a singleton): the pipeline's Read,
// Pull and Stage-in, threaded and in sequence, a pull into a spent pass's buffer, and the
// pass consistency that replaces rows an earlier pass held when they were pulled.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "../common/pulled_rows.h"
#include "data_test_files.h"
#include "strata/comm/param_exchange.h"
#include "strata/common/row.h"
#include "strata/model/optimizer.h"
#include "train/memory_plan.h"
#include "train/pass_pipeline.h"
#include "train/pass_refresh.h"

namespace strata {
namespace {

TrainOptions SmallOptions() {
  TrainOptions o;
  o.model.embedding_dim = 4;
  o.model.mlp = {8};
  o.workers_per_rank = 2;
  o.batch_size = 16;
  o.pass_examples = 64;
  o.epochs = 2;
  o.prefetch_passes = 2;
  return o;
}

// n Criteo rows whose tokens repeat across rows, so consecutive passes share keys.
std::string CriteoRows(int n) {
  fmt::memory_buffer text;
  for (int i = 0; i < n; ++i) {
    fmt::format_to(std::back_inserter(text), "{}", i % 3 == 0 ? 1 : 0);
    for (int d = 0; d < 13; ++d) fmt::format_to(std::back_inserter(text), "\t{}", (i + d) % 7);
    for (int s = 0; s < 26; ++s) fmt::format_to(std::back_inserter(text), "\t{:x}", 0x100 * (s + 1) + (i * 7 + s * 3) % (11 + s));
    fmt::format_to(std::back_inserter(text), "\n");
  }
  return fmt::to_string(text);
}

// A plan of a file of 300 such rows in dir, for o's workers and batches.
ShardPlan PlanOfRows(const test::TempDir& dir, const TrainOptions& o) {
  test::WriteText(dir.File("train.tsv"), CriteoRows(300));
  ShardPlan plan;
  REQUIRE(PlanShards({dir.File("train.tsv")}, o.workers_per_rank, static_cast<uint64_t>(o.batch_size), &plan).ok());
  return plan;
}

struct Rank {
  Comm comm;
  std::unique_ptr<ShardServer> server;
  std::unique_ptr<HbmPs> hbm;
  std::unique_ptr<ParamExchange> exchange;

  explicit Rank(const TrainOptions& o) {
    server = std::make_unique<ShardServer>(o.model, NewMemoryRowStore(RowLayoutOf(o.model).bytes()), nullptr);
    HbmOptions ho;
    ho.spec = o.model;
    ho.workers = o.workers_per_rank;
    ho.max_batch = o.batch_size;
    hbm = NewHostHbmPs(ho);
    exchange = std::make_unique<ParamExchange>(&comm, server.get());
  }

  std::vector<uint8_t> Active(const std::vector<uint64_t>& keys) {
    std::vector<uint8_t> rows(keys.size() * server->row_bytes());
    REQUIRE(hbm->Export(keys.data(), keys.size(), rows.data()).ok());
    return rows;
  }

  // Stands in for training: adds (pass + 1) to every active row's first float.
  void Train(const PassRouting& routing) {
    std::vector<uint8_t> rows = Active(routing.keys());
    for (size_t i = 0; i < routing.size(); ++i) {
      RowLayout::Embedding(&rows[i * server->row_bytes()])[0] += static_cast<float>(routing.pass() + 1);
    }
    REQUIRE(hbm->Insert(routing.keys().data(), routing.size(), rows.data()).ok());
  }
};

// Every pass as training sees it after SwapIn: its keys and its rows.
struct SeenPass {
  int pass;
  std::vector<uint64_t> keys;
  std::vector<uint8_t> rows;
  bool operator==(const SeenPass&) const = default;
};

// ahead (may be null): passes read before, for the pipeline to start with. read_s (may be
// null): each pass's Read-stage seconds.
std::vector<SeenPass> RunPipeline(const TrainOptions& o, const ShardPlan& plan, bool threaded,
                                  ReadAhead* ahead = nullptr, std::vector<double>* read_s = nullptr) {
  Rank rank(o);
  PassRefresh refresh;
  std::unique_ptr<PassPipeline> pipeline;
  REQUIRE(PassPipeline::StartTraining(o, plan, &rank.comm, rank.server.get(), rank.hbm.get(), ReadPosition{},
                                      threaded, ahead, &pipeline).ok());
  std::vector<SeenPass> seen;
  for (;;) {
    PassData pass = pipeline->Next();
    REQUIRE(pass.error.ok());
    if (pass.last) break;
    if (read_s) read_s->push_back(pass.read_s);
    std::set<uint64_t> distinct;
    for (const auto& worker : pass.batches) for (const Batch& b : worker) distinct.insert(b.keys.begin(), b.keys.end());
    CHECK(pass.routing.keys() == std::vector<uint64_t>(distinct.begin(), distinct.end()));
    CHECK(pass.rows.empty());  // staged, then freed
    REQUIRE(refresh.Apply(&pass, rank.hbm.get(), rank.exchange.get(), &rank.comm).ok());
    REQUIRE(pipeline->SwapIn().ok());
    seen.push_back({pass.pass, pass.routing.keys(), rank.Active(pass.routing.keys())});
    rank.Train(pass.routing);
    REQUIRE(rank.exchange->PushBack(pass.routing, test::ExportFrom(pass.routing.keys(), rank.Active(pass.routing.keys()),
                                                                    rank.server->row_bytes())).ok());
    refresh.Remember(pass.routing.keys());
  }
  pipeline->Stop();
  return seen;
}

TEST_CASE("pipeline: with one rank, threaded stages stage the same passes and rows as sequential ones") {
  test::TempDir dir;
  const TrainOptions o = SmallOptions();
  const ShardPlan plan = PlanOfRows(dir, o);
  const std::vector<SeenPass> sequential = RunPipeline(o, plan, false);
  const std::vector<SeenPass> threaded = RunPipeline(o, plan, true);
  CHECK(sequential.size() == 10);  // 300 rows in passes of 64, twice
  for (size_t p = 0; p < sequential.size(); ++p) CHECK(sequential[p].pass == static_cast<int>(p));
  CHECK(threaded == sequential);
  // Training reached the rows: a key of every pass was trained by the passes before it.
  const float first = RowLayout::Embedding(sequential.back().rows.data())[0];
  std::vector<uint8_t> fresh(RowLayout(4, 4).bytes());
  InitRow(o.model, sequential.back().keys[0], fresh.data());
  CHECK(first != RowLayout::Embedding(fresh.data())[0]);
}

// The memory plan's key sample reads the first two passes; training starts from them and
// its reader, reading on after them: the same passes and rows as a pipeline that reads
// everything itself, for an input of many passes and for one shorter than a pass (whose
// second pass is already the next epoch's).
TEST_CASE("pipeline: the passes the key sample read are training's first, not read again") {
  test::TempDir dir;
  const TrainOptions o = SmallOptions();  // 2 epochs
  for (const int rows : {300, 40}) {
    CAPTURE(rows);
    const std::string file = dir.File(fmt::format("train-{}.tsv", rows));
    test::WriteText(file, CriteoRows(rows));
    ShardPlan plan;
    REQUIRE(PlanShards({file}, o.workers_per_rank, static_cast<uint64_t>(o.batch_size), &plan).ok());
    const std::vector<SeenPass> read_here = RunPipeline(o, plan, false);
    for (const bool threaded : {false, true}) {
      CAPTURE(threaded);
      Comm comm;
      KeySample keys;
      ReadAhead ahead;
      REQUIRE(SampleKeys(o, plan, &comm, &keys, &ahead).ok());
      REQUIRE(ahead.passes.size() == 2);
      std::vector<double> read_s;
      CHECK(RunPipeline(o, plan, threaded, &ahead, &read_s) == read_here);
      CHECK(ahead.reader == nullptr);  // taken by the pipeline
      REQUIRE(read_s.size() >= 2);
      CHECK(read_s[0] == 0.0);
      CHECK(read_s[1] == 0.0);
      if (read_s.size() > 2) CHECK(read_s[2] > 0.0);
    }
  }
}

// A backend that records the room asked for (ReserveStage) and does nothing else.
class RoomRecorder final : public HbmPs {
 public:
  std::vector<size_t> reserved;

  void ReserveStage(size_t expected_keys) override { reserved.push_back(expected_keys); }
  int num_workers() const override { return 1; }
  size_t num_dense_params() const override { return 0; }
  std::string name() const override { return "room recorder"; }
  Status BeginPass(int, size_t) override { return Status::OK(); }
  Status Insert(const uint64_t*, size_t, const uint8_t*) override { return Status::OK(); }
  Status BeginStage(int, size_t) override { return Status::OK(); }
  Status Stage(const uint64_t*, size_t, const uint8_t*) override { return Status::OK(); }
  Status SwapIn() override { return Status::OK(); }
  Status Export(const uint64_t*, size_t, uint8_t*) override { return Status::OK(); }
  Status ComputeGradients(int, const Batch&, float, WorkerGrads*) override { return Status::OK(); }
  Status Predict(int, const Batch&, float*) override { return Status::OK(); }
  Status ApplySparse(const uint64_t*, size_t, const float*, const uint32_t*) override { return Status::OK(); }
  Status ApplyDense(const float*) override { return Status::OK(); }
  void SetRateFactor(double) override {}
  Status GetDenseState(DenseState*) const override { return Status::OK(); }
  Status SetDenseState(const DenseState&) override { return Status::OK(); }
};

// A job that starts with the passes its key sample read makes the first one's room as the
// pipeline starts, before anything is pulled; one that starts elsewhere (a resumed job)
// makes it when its first pass is pulled.
TEST_CASE("pipeline: the first pass's room is made at start-up from the pass read ahead") {
  test::TempDir dir;
  const TrainOptions o = SmallOptions();
  const ShardPlan plan = PlanOfRows(dir, o);
  Comm comm;
  ShardServer server(o.model, NewMemoryRowStore(RowLayoutOf(o.model).bytes()), nullptr);
  for (const bool at_start : {true, false}) {
    CAPTURE(at_start);
    KeySample keys;
    ReadAhead ahead;
    REQUIRE(SampleKeys(o, plan, &comm, &keys, &ahead).ok());
    const size_t first_keys = ahead.passes.front().keys.size();
    REQUIRE(first_keys > 0);
    RoomRecorder hbm;
    const ReadPosition from = at_start ? ReadPosition{} : ReadPosition{1, 0, {64, 64}};
    std::unique_ptr<PassPipeline> pipeline;
    REQUIRE(PassPipeline::StartTraining(o, plan, &comm, &server, &hbm, from, false, &ahead, &pipeline).ok());
    CHECK(hbm.reserved == (at_start ? std::vector<size_t>{first_keys} : std::vector<size_t>{}));
    pipeline->Stop();
  }
}

// The first buffer of a pass's rows: where ForEachPart's first part starts, less its
// header of two bytes a key.
const uint8_t* FirstBuffer(const PulledRows& rows, const std::vector<uint64_t>& keys) {
  const uint8_t* first = nullptr;
  rows.ForEachPart(keys, [&](const uint64_t*, size_t n, const uint8_t* part) {
    if (first == nullptr) first = part - 2 * n;
  });
  return first;
}

// A pass's buffers go round: its reply, recycled once staged, holds the rows the pass
// returns until the next pull applies them, and then that pull's reply.
TEST_CASE("pull: the reply reuses the buffer of the rank's pool that held the last pass's reply and write-back") {
  const TrainOptions o = SmallOptions();
  const std::vector<uint64_t> first = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, second = {4, 5, 6, 11, 12},
                              third = {1, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24};
  Rank fresh(o), reusing(o);
  const size_t rb = fresh.server->row_bytes();
  const uint8_t* last_buffer = nullptr;
  int pass = 0;
  for (const std::vector<uint64_t>* keys : {&first, &second, &third}) {
    CAPTURE(pass);
    PassData a, b;
    REQUIRE(fresh.exchange->Pull(pass, *keys, {}, &a.rows, &a.held, &a.routing).ok());
    REQUIRE(reusing.exchange->Pull(pass, *keys, {}, &b.rows, &b.held, &b.routing).ok());
    CHECK(b.routing.keys() == a.routing.keys());
    CHECK(b.held == a.held);
    CHECK(test::FlatRows(b.rows, b.routing.keys(), rb) == test::FlatRows(a.rows, a.routing.keys(), rb));
    // The second pass is smaller than the first and fits its buffer; the third is larger.
    if (pass == 1) CHECK(FirstBuffer(b.rows, b.routing.keys()) == last_buffer);
    last_buffer = FirstBuffer(b.rows, b.routing.keys());
    const std::vector<uint8_t> rows = test::FlatRows(b.rows, b.routing.keys(), rb);  // both ranks' rows
    reusing.exchange->Recycle(std::move(b.rows));
    CHECK(reusing.server->FlushWriteBack().ok());
    CHECK(reusing.server->buffers_kept() == 1);  // the reply, which the push-back takes
    REQUIRE(fresh.exchange->PushBack(a.routing, test::ExportFrom(a.routing.keys(), rows, rb)).ok());
    REQUIRE(reusing.exchange->PushBack(b.routing, test::ExportFrom(b.routing.keys(), rows, rb)).ok());
    CHECK(reusing.server->buffers_kept() == 0);
    ++pass;
  }
}

TEST_CASE("pass refresh: held rows come from this rank's previous pass, or are pulled again after Forget") {
  const TrainOptions o = SmallOptions();
  for (const bool forget : {false, true}) {
    Rank rank(o);
    const size_t rb = rank.server->row_bytes();
    std::vector<uint8_t> held;
    PassData p0, p1;
    REQUIRE(rank.exchange->Pull(0, {1, 2, 3, 4, 5, 6}, {}, &p0.rows, &held, &p0.routing).ok());
    REQUIRE(rank.hbm->BeginStage(0, 6).ok());
    REQUIRE(rank.hbm->Stage(p0.routing.keys().data(), 6, test::FlatRows(p0.rows, p0.routing.keys(), rb).data()).ok());
    REQUIRE(rank.hbm->SwapIn().ok());
    rank.Train(p0.routing);
    const std::vector<uint8_t> trained = rank.Active(p0.routing.keys());
    // Pass 1 is pulled while pass 0 still trains: keys 4..6 are flagged.
    REQUIRE(rank.exchange->Pull(1, {4, 5, 6, 7, 8}, {}, &p1.rows, &p1.held, &p1.routing).ok());
    CHECK(p1.held == std::vector<uint8_t>{1, 1, 1, 0, 0});
    REQUIRE(rank.hbm->BeginStage(1, 5).ok());
    REQUIRE(rank.hbm->Stage(p1.routing.keys().data(), 5, test::FlatRows(p1.rows, p1.routing.keys(), rb).data()).ok());
    REQUIRE(rank.exchange->PushBack(p0.routing, test::ExportFrom(p0.routing.keys(), trained, rb)).ok());
    PassRefresh refresh;
    refresh.Remember(p0.routing.keys());
    if (forget) refresh.Forget();
    REQUIRE(refresh.Apply(&p1, rank.hbm.get(), rank.exchange.get(), &rank.comm).ok());
    CHECK(refresh.copied() == (forget ? 0u : 3u));
    CHECK(refresh.pulled() == (forget ? 3u : 0u));
    REQUIRE(rank.hbm->SwapIn().ok());
    const std::vector<uint8_t> now = rank.Active(p1.routing.keys());
    for (size_t i = 0; i < 3; ++i) CHECK(std::memcmp(&now[i * rb], &trained[(i + 3) * rb], rb) == 0);
    std::vector<uint8_t> fresh(rb);
    InitRow(o.model, 7, fresh.data());
    CHECK(std::memcmp(&now[3 * rb], fresh.data(), rb) == 0);
  }
}

}  // namespace
}  // namespace strata
