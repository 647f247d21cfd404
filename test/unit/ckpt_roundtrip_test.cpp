// Checkpoint round trip: rows and metadata read back bitwise, resharding to other rank
// counts, the resume compatibility check, and h5dump reading the files.
#include <doctest/doctest.h>

#include <cstdlib>

#include "ckpt_test_util.h"

namespace strata {
namespace {

using namespace ckpt_test;

TEST_CASE("ckpt: rows and meta read back bitwise") {
  TempDir tmp;
  Job job(SmallSpec(), 2);
  job.AddRows(0, 40000, 7, 3);
  const ckpt::CheckpointMeta meta = MakeMeta(job, 5, 55);
  const std::string name = WriteAndPublish(job, tmp.path(), ckpt::CheckpointName(5), meta);

  std::string path;
  REQUIRE(ckpt::ResolveCheckpoint(tmp.path(), &path).ok());
  CHECK(path == tmp.path() + "/" + name);
  ckpt::CheckpointMeta got;
  REQUIRE(ckpt::ReadMeta(path, &got).ok());
  CHECK(got.format_version == ckpt::kFormatVersion);
  CHECK(got.kind == ckpt::Kind::kFull);
  CHECK(got.flags == meta.flags);
  CHECK(got.train_input == meta.train_input);
  CHECK(got.model.embedding_dim == 4);
  CHECK(got.model.mlp == meta.model.mlp);
  CHECK(got.model.lr_sparse == meta.model.lr_sparse);
  CHECK(got.model.seed == meta.model.seed);
  CHECK(got.progress.pass == 5);
  CHECK(got.progress.epoch == meta.progress.epoch);
  CHECK(got.progress.examples == meta.progress.examples);
  CHECK(got.progress.global_step == meta.progress.global_step);
  CHECK(got.ranks == 2);
  CHECK(got.workers == 4);
  CHECK(got.data_position == meta.data_position);
  CHECK(got.dense.steps == meta.dense.steps);
  CHECK(std::memcmp(got.dense.params.data(), meta.dense.params.data(), meta.dense.params.size() * 4) == 0);
  CHECK(got.dense.m == meta.dense.m);
  CHECK(got.dense.v == meta.dense.v);
  REQUIRE(got.rank_files.size() == 2);
  CHECK(got.rank_files[0].rows + got.rank_files[1].rows == 40000);

  for (int r = 0; r < 2; ++r) {
    const Rows rows = LoadRows(path, r, 2);
    CHECK(rows.size() == job.stores[r]->num_keys());
    for (const auto& [key, row] : rows) CHECK(job.rows.at(key) == row);
  }
}

TEST_CASE("ckpt: a full checkpoint's rows go straight to and from their extents, O_DIRECT or not") {
  for (const bool tmpfs : {false, true}) {  // a disk takes O_DIRECT; tmpfs only from Linux 6.6
    CAPTURE(tmpfs);
    TempDir tmp(tmpfs);
    Job job(SmallSpec(), 1);
    job.AddRows(0, 5001, 9, 2);  // not a whole number of 4 KiB blocks in any column
    const std::string name = WriteAndPublish(job, tmp.path(), ckpt::CheckpointName(2), MakeMeta(job, 2, 5));
    const Rows rows = LoadRows(tmp.path() + "/" + name, 0, 1);
    CHECK(rows.size() == 5001);
    for (const auto& [key, row] : rows) CHECK(job.rows.at(key) == row);
  }
}

TEST_CASE("ckpt: a rank file of several batches of rows reads back bitwise, O_DIRECT or not") {
  ModelSpec wide = SmallSpec();
  wide.embedding_dim = 256;  // 1024 rows a chunk, 16384 a batch
  for (const bool tmpfs : {false, true}) {
    CAPTURE(tmpfs);
    TempDir tmp(tmpfs);
    Job job(wide, 1);
    job.AddRows(0, 2 * 16384 + 4097, 3, 2);  // two full batches and a short one, across both buffers
    const std::string name = WriteAndPublish(job, tmp.path(), ckpt::CheckpointName(2), MakeMeta(job, 2, 5));
    const Rows rows = LoadRows(tmp.path() + "/" + name, 0, 1);
    CHECK(rows.size() == 2 * 16384 + 4097);
    for (const auto& [key, row] : rows) CHECK(job.rows.at(key) == row);
  }
}

TEST_CASE("ckpt: a store that gives other rows than it counted fails its checkpoint") {
  TempDir tmp;
  Job job(SmallSpec(), 1);
  job.AddRows(0, 300, 9, 2);
  RowStore& store = *job.stores[0];
  const ckpt::RowSource miscounted{[&store](const ckpt::RowVisitor& visit) { return store.Scan(visit); },
                                   store.num_keys() + 1};
  ckpt::RankFileInfo info;
  const Status st = ckpt::WriteRankRows(tmp.path() + "/t", 0, job.layout, miscounted, 0, &info);
  CHECK(st.code() == Status::Code::kIOError);
  CHECK(st.message().find("gave 300 rows, not the 301") != std::string::npos);
}

TEST_CASE("ckpt: a checkpoint of 2 ranks reshards to 1 and 4 ranks") {
  TempDir tmp;
  Job job(SmallSpec(), 2);
  job.AddRows(100, 5000, 3, 1);
  WriteAndPublish(job, tmp.path(), ckpt::CheckpointName(1), MakeMeta(job, 1, 1));
  for (int ranks : {1, 4}) {
    CAPTURE(ranks);
    Rows all;
    for (int r = 0; r < ranks; ++r) {
      for (auto& [key, row] : LoadRows(tmp.path() + "/" + ckpt::CheckpointName(1), r, ranks)) {
        CHECK(all.emplace(key, row).second);  // every key exactly once, at its owner
      }
    }
    CHECK(all == job.rows);
  }
}

// What the metadata fuzzer checks, on the cases it reached first.
TEST_CASE("ckpt: metadata no build could have written is corruption") {
  TempDir tmp;
  Job job(SmallSpec(), 1);
  job.AddRows(0, 10, 7, 3);
  ckpt::CheckpointMeta good = MakeMeta(job, 1, 5);
  good.rank_files = {{10, 0}};
  int written = 0;
  auto refused = [&](const ckpt::CheckpointMeta& meta, const std::string& what) {
    const std::string dir = tmp.path() + "/m" + std::to_string(++written);
    REQUIRE(ckpt::WriteMeta(dir, meta).ok());
    ckpt::CheckpointMeta got;
    const Status st = ckpt::ReadMeta(dir, &got);
    CHECK(st.code() == Status::Code::kCorruption);
    CHECK_MESSAGE(st.message().find(what) != std::string::npos, st.message());
  };
  ckpt::CheckpointMeta m = good;
  m.model.mlp = {8, 0};
  refused(m, "mlp width 0");
  m = good;
  m.model.mlp = {2147483647};
  refused(m, "/dense/params has");
  m = good;
  m.model.embedding_dim = kMaxEmbeddingDim + 1;
  refused(m, "embedding_dim 1025");
  m = good;
  m.model.num_slots = 0;
  refused(m, "num_slots 0");
  m = good;
  m.dense.params.pop_back();
  refused(m, "/dense/params has");
  m = good;
  m.dense.v.resize(3);
  refused(m, "/dense/v has 3 values");
}

TEST_CASE("ckpt: CheckCompatible names the differing flag") {
  ckpt::CheckpointMeta meta;
  meta.model = SmallSpec();
  ModelSpec now = SmallSpec();
  CHECK(ckpt::CheckCompatible(meta, now).ok());
  now.lr_sparse = 1.f;  // a learning rate may change
  CHECK(ckpt::CheckCompatible(meta, now).ok());
  now.seed = 99;  // the seed draws every new row: another one would not continue the run
  CHECK(ckpt::CheckCompatible(meta, now).message() == "cannot resume: --seed 2026 in the checkpoint, 99 now");

  now = SmallSpec();
  now.embedding_dim = 8;
  Status st = ckpt::CheckCompatible(meta, now);
  CHECK(st.code() == Status::Code::kInvalidArgument);
  CHECK(st.message() == "cannot resume: --embedding-dim 4 in the checkpoint, 8 now");
  now = SmallSpec();
  now.mlp = {16};
  CHECK(ckpt::CheckCompatible(meta, now).message() == "cannot resume: --mlp 8,4 in the checkpoint, 16 now");
  now = SmallSpec();
  now.sparse_optimizer = SparseOptimizerKind::kSgd;
  CHECK(ckpt::CheckCompatible(meta, now).message() == "cannot resume: --sparse-optimizer adagrad in the checkpoint, sgd now");
  now = SmallSpec();
  now.dense_optimizer = DenseOptimizerKind::kSgd;
  CHECK(ckpt::CheckCompatible(meta, now).message() == "cannot resume: --dense-optimizer adam in the checkpoint, sgd now");
  now = SmallSpec();
  meta.kind = ckpt::Kind::kDelta;
  CHECK(ckpt::CheckCompatible(meta, now).message().find("delta") != std::string::npos);
  meta.kind = ckpt::Kind::kFull;
  now.num_slots = 26;
  CHECK(ckpt::CheckCompatible(meta, now).message().find("slots") != std::string::npos);
}

TEST_CASE("ckpt: h5dump -H reads every file") {
  if (std::system("h5dump --version >/dev/null 2>&1") != 0) {
    MESSAGE("skipped: h5dump (hdf5-tools) is not installed");
    return;
  }
  TempDir tmp;
  WriteTwoPassScenario(tmp.path());
  for (const std::string& dir : {"ckpt/" + ckpt::CheckpointName(2), "deltas/" + ckpt::DeltaName(1)}) {
    for (const char* file : {"meta.h5", "rows-0.h5", "rows-1.h5"}) {
      const std::string path = tmp.path() + "/" + dir + "/" + file;
      CAPTURE(path);
      CHECK(std::system(("h5dump -H '" + path + "' >/dev/null 2>&1").c_str()) == 0);
    }
  }
}

}  // namespace
}  // namespace strata
