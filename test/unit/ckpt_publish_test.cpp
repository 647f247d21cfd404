// Publishing through LATEST: a crash at any step before LATEST is replaced leaves the
// previous checkpoint selected; leftovers are cleaned by the next publish; keep-K retention.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "ckpt_test_util.h"

namespace strata {
namespace {

using namespace ckpt_test;
namespace fs = std::filesystem;

std::string Resolve(const std::string& dir) {
  std::string path;
  const Status st = ckpt::ResolveCheckpoint(dir, &path);
  REQUIRE_MESSAGE(st.ok(), st.ToString());
  return fs::path(path).filename().string();
}

TEST_CASE("ckpt: a crash before LATEST moves leaves the previous checkpoint selected") {
  TempDir tmp;
  const std::string dir = tmp.path();
  Job job(SmallSpec(), 2);
  job.AddRows(0, 1000, 1, 1);
  WriteAndPublish(job, dir, ckpt::CheckpointName(1), MakeMeta(job, 1, 1));
  const Rows pass1 = job.rows;
  CHECK(Resolve(dir) == ckpt::CheckpointName(1));

  job.AddRows(5000, 100, 2, 2);
  ckpt::CheckpointMeta meta = MakeMeta(job, 2, 2);
  meta.rank_files.resize(2);
  const std::string tmp2 = dir + "/" + ckpt::TmpName(ckpt::CheckpointName(2));

  SUBCASE("crash while rank files are written") {
    REQUIRE(ckpt::WriteRankRows(tmp2, 0, job.layout, *job.stores[0], 0, &meta.rank_files[0]).ok());
  }
  SUBCASE("crash after meta.h5, before the rename") {
    for (int r = 0; r < 2; ++r) REQUIRE(ckpt::WriteRankRows(tmp2, r, job.layout, *job.stores[r], 0, &meta.rank_files[r]).ok());
    REQUIRE(ckpt::WriteMeta(tmp2, meta).ok());
  }
  SUBCASE("crash after the rename, before LATEST") {
    for (int r = 0; r < 2; ++r) REQUIRE(ckpt::WriteRankRows(tmp2, r, job.layout, *job.stores[r], 0, &meta.rank_files[r]).ok());
    REQUIRE(ckpt::WriteMeta(tmp2, meta).ok());
    fs::rename(tmp2, dir + "/" + ckpt::CheckpointName(2));
  }
  SUBCASE("crash while LATEST.tmp is written") {
    std::ofstream(dir + "/LATEST.tmp") << "ckpt-0000";
  }
  CHECK(Resolve(dir) == ckpt::CheckpointName(1));
  CHECK(LoadRows(dir + "/" + Resolve(dir), 0, 1) == pass1);

  // The restarted job redoes pass 2 (rows now differ) and publishes over the leftovers.
  job.AddRows(5000, 100, 3, 2);
  WriteAndPublish(job, dir, ckpt::CheckpointName(2), MakeMeta(job, 2, 3));
  CHECK(Resolve(dir) == ckpt::CheckpointName(2));
  CHECK(LoadRows(dir + "/" + ckpt::CheckpointName(2), 0, 1) == job.rows);
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    CHECK(e.path().filename().string().rfind(".tmp-", 0) != 0);  // leftovers removed
  }
}

TEST_CASE("ckpt: keep-K removes all but the newest K, never the selected one") {
  TempDir tmp;
  Job job(SmallSpec(), 1);
  job.AddRows(0, 50, 1, 1);
  for (int pass = 1; pass <= 5; ++pass) WriteAndPublish(job, tmp.path(), ckpt::CheckpointName(pass), MakeMeta(job, pass, pass), 0, 2);
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(tmp.path())) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"LATEST", ckpt::CheckpointName(4), ckpt::CheckpointName(5)});
  CHECK(Resolve(tmp.path()) == ckpt::CheckpointName(5));

  // keep <= 0 keeps everything.
  WriteAndPublish(job, tmp.path(), ckpt::CheckpointName(6), MakeMeta(job, 6, 6), 0, 0);
  CHECK(fs::exists(tmp.path() + "/" + ckpt::CheckpointName(4)));
}

TEST_CASE("ckpt: ResolveCheckpoint explains what is missing") {
  TempDir tmp;
  std::string path;
  Status st = ckpt::ResolveCheckpoint(tmp.path(), &path);
  CHECK(st.code() == Status::Code::kNotFound);
  CHECK(st.message().find("no LATEST") != std::string::npos);
  std::ofstream(tmp.path() + "/LATEST") << "ckpt-00000009\n";
  st = ckpt::ResolveCheckpoint(tmp.path(), &path);
  CHECK(st.code() == Status::Code::kNotFound);
  CHECK(st.message().find("LATEST names ckpt-00000009") != std::string::npos);
  std::ofstream(tmp.path() + "/LATEST") << "../elsewhere\n";
  CHECK(ckpt::ResolveCheckpoint(tmp.path(), &path).code() == Status::Code::kCorruption);
}

}  // namespace
}  // namespace strata
