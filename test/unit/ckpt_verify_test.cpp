// Damaged checkpoints are reported, never read back as data: a flipped byte inside a
// dataset, a truncated file, a missing, swapped or stale rank file, damaged meta.h5.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "ckpt/h5_util.h"
#include "ckpt_test_util.h"
#include "strata/ckpt/verify.h"

namespace strata {
namespace {

using namespace ckpt_test;
namespace fs = std::filesystem;

// File offset of the first chunk of `dataset` in an HDF5 file.
uint64_t FirstChunkOffset(const std::string& file, const std::string& dataset, hid_t type, uint64_t cols) {
  ckpt::h5::Handle f;
  REQUIRE(ckpt::h5::OpenFileReadOnly(file, &f).ok());
  ckpt::h5::Dataset ds;
  REQUIRE(ckpt::h5::Dataset::Open(f.get(), dataset, type, cols, file, &ds).ok());
  std::vector<uint64_t> offsets;
  const Status st = ds.ChunkOffsets(&offsets);
  REQUIRE_MESSAGE(st.ok(), st.ToString());
  REQUIRE(!offsets.empty());
  return offsets.front();
}

void FlipByte(const std::string& file, uint64_t offset) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(offset);
  char c = 0;
  f.read(&c, 1);
  c ^= 0x10;
  f.seekp(offset);
  f.write(&c, 1);
  REQUIRE(f.good());
}

// Verify must fail with a Corruption/NotFound whose message holds every part of `expect`.
void ExpectVerifyFails(const std::string& ckpt_path, std::initializer_list<const char*> expect) {
  ckpt::VerifyReport report;
  const Status st = ckpt::VerifyCheckpoint(ckpt_path, &report);
  CAPTURE(st.ToString());
  CHECK_FALSE(st.ok());
  for (const char* part : expect) CHECK(st.message().find(part) != std::string::npos);
}

TEST_CASE("ckpt: verify passes a good checkpoint and reports damage clearly") {
  TempDir tmp;
  WriteTwoPassScenario(tmp.path());
  const std::string ckpt = tmp.path() + "/ckpt/" + ckpt::CheckpointName(2);
  ckpt::VerifyReport report;
  REQUIRE(ckpt::VerifyCheckpoint(ckpt, &report).ok());
  CHECK(report.problems.empty());
  ckpt::CheckpointMeta meta;
  REQUIRE(ckpt::ReadMeta(ckpt, &meta).ok());
  const auto load = [&] { return ckpt::LoadOwnedRows(ckpt, meta, 0, 1, [](const uint64_t*, size_t, const uint8_t*) { return Status::OK(); }); };

  SUBCASE("flipped byte inside a dataset") {
    const std::string file = ckpt + "/rows-1.h5";
    FlipByte(file, FirstChunkOffset(file, "/rows/embedding", H5T_NATIVE_FLOAT, 4) + 100);
    ExpectVerifyFails(ckpt, {"rows-1.h5", "CRC32", "damaged"});
    CHECK(load().code() == Status::Code::kCorruption);
  }
  SUBCASE("flipped byte in the dense parameters") {
    const std::string file = ckpt + "/meta.h5";
    FlipByte(file, FirstChunkOffset(file, "/dense/params", H5T_NATIVE_FLOAT, 0) + 8);
    ExpectVerifyFails(ckpt, {"meta.h5: /dense/params", "Fletcher32"});
  }
  SUBCASE("truncated rank file") {
    const std::string file = ckpt + "/rows-0.h5";
    fs::resize_file(file, fs::file_size(file) / 2);
    ExpectVerifyFails(ckpt, {"rows-0.h5", "truncated"});
    CHECK(load().code() == Status::Code::kCorruption);
  }
  SUBCASE("missing rank file") {
    fs::remove(ckpt + "/rows-1.h5");
    ExpectVerifyFails(ckpt, {"rows-1.h5: missing"});
    CHECK(load().code() == Status::Code::kNotFound);
  }
  SUBCASE("swapped rank files") {
    fs::rename(ckpt + "/rows-0.h5", ckpt + "/x");
    fs::rename(ckpt + "/rows-1.h5", ckpt + "/rows-0.h5");
    fs::rename(ckpt + "/x", ckpt + "/rows-1.h5");
    ExpectVerifyFails(ckpt, {"rows-0.h5: written by rank 1"});
  }
  SUBCASE("stale rank file of another checkpoint") {
    fs::copy_file(tmp.path() + "/ckpt/" + ckpt::CheckpointName(1) + "/rows-1.h5", ckpt + "/rows-1.h5",
                  fs::copy_options::overwrite_existing);
    ExpectVerifyFails(ckpt, {"rows-1.h5: /rows/keys", "rows, meta.h5 says"});
  }
  SUBCASE("missing meta.h5") {
    fs::remove(ckpt + "/meta.h5");
    ckpt::VerifyReport r;
    CHECK(ckpt::VerifyCheckpoint(ckpt, &r).code() == Status::Code::kNotFound);
  }
}

TEST_CASE("ckpt: a rank file with the right count but other rows fails its CRC") {
  TempDir tmp;
  Job job(SmallSpec(), 1);
  job.AddRows(0, 100, 1, 1);
  WriteAndPublish(job, tmp.path(), ckpt::CheckpointName(1), MakeMeta(job, 1, 1));
  job.AddRows(0, 100, 2, 1);  // same keys, new values
  WriteAndPublish(job, tmp.path(), ckpt::CheckpointName(2), MakeMeta(job, 2, 2));
  const std::string a = tmp.path() + "/" + ckpt::CheckpointName(1), b = tmp.path() + "/" + ckpt::CheckpointName(2);
  fs::copy_file(a + "/rows-0.h5", b + "/rows-0.h5", fs::copy_options::overwrite_existing);
  ExpectVerifyFails(b, {"rows-0.h5: CRC32"});
}

}  // namespace
}  // namespace strata
