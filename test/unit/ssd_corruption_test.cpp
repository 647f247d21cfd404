// SSD-PS damage reporting: flipped bytes, truncated or missing segments, a damaged
// manifest and leftover files. Each damage is reported as a Status naming the file, and no
// damaged row is ever returned as data.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "ssd_test_util.h"
#include "strata/ssd/ssd_format.h"

namespace strata::ssd_test {
namespace {

constexpr size_t kRowBytes = 48;

// A synced store of several segments; returns its model.
Model BuildStore(const SsdOptions& opts) {
  auto store = OpenOrDie(opts);
  Model model;
  std::vector<uint64_t> keys(2000);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = i;
  PutRows(*store, keys, 1, &model);
  PutRows(*store, std::vector<uint64_t>(keys.begin(), keys.begin() + 300), 2, &model);
  REQUIRE(store->Sync().ok());
  return model;
}

std::vector<std::string> SegmentPaths(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (ssd::ParseSegmentFileName(e.path().filename().string()) != 0) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void FlipByte(const std::string& path, uint64_t offset) {
  const int fd = ::open(path.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  uint8_t b = 0;
  REQUIRE(::pread(fd, &b, 1, static_cast<off_t>(offset)) == 1);
  b ^= 0x5A;
  REQUIRE(::pwrite(fd, &b, 1, static_cast<off_t>(offset)) == 1);
  ::close(fd);
}

// Opening fails with `code` and a message naming `file` and containing `what`.
void ExpectOpenFails(const SsdOptions& opts, Status::Code code, const std::string& file, const std::string& what) {
  std::unique_ptr<SsdStore> store;
  const Status st = OpenSsdStore(opts, &store);
  CAPTURE(st.ToString());
  CHECK(st.code() == code);
  CHECK(st.message().find(std::filesystem::path(file).filename().string()) != std::string::npos);
  CHECK(st.message().find(what) != std::string::npos);
}

}  // namespace

TEST_CASE("ssd: a flipped record byte fails the open naming the segment") {
  TempDir dir;
  const SsdOptions opts = SmallOptions(dir.store(), kRowBytes);
  BuildStore(opts);
  const std::string seg = SegmentPaths(dir.store()).at(1);
  FlipByte(seg, ssd::RecordLayout::For(kRowBytes).Offset(7) + 20);
  ExpectOpenFails(opts, Status::Code::kCorruption, seg, "record 7");
}

TEST_CASE("ssd: damage found by a read is reported, never returned as a row") {
  TempDir dir;
  SsdOptions opts = SmallOptions(dir.store(), kRowBytes);
  opts.background_compaction = false;
  const Model model = BuildStore(opts);
  auto store = OpenOrDie(opts);
  // Key 1000 was written once, in order: record 1000 - (records of earlier segments).
  const std::vector<std::string> segs = SegmentPaths(dir.store());
  const auto layout = ssd::RecordLayout::For(kRowBytes);
  const uint64_t per_seg = (opts.segment_bytes - ssd::kHeaderBytes) / layout.unit_bytes * layout.per_unit;
  FlipByte(segs.at(1000 / per_seg), layout.Offset(1000 % per_seg) + 30);
  uint64_t key = 1000;
  std::vector<uint8_t> row(kRowBytes, 0), found(1);
  const Status st = store->Get(&key, 1, row.data(), found.data());
  CAPTURE(st.ToString());
  CHECK(st.code() == Status::Code::kCorruption);
  CHECK(st.message().find(std::filesystem::path(segs.at(1000 / per_seg)).filename().string()) != std::string::npos);
  CHECK(row != model.at(1000));
  // The rest of the store stays readable.
  key = 5;
  REQUIRE(store->Get(&key, 1, row.data(), found.data()).ok());
  CHECK(row == model.at(5));
}

TEST_CASE("ssd: truncated, missing or damaged segment headers fail the open") {
  TempDir dir;
  const SsdOptions opts = SmallOptions(dir.store(), kRowBytes);
  BuildStore(opts);
  const std::vector<std::string> segs = SegmentPaths(dir.store());
  REQUIRE(segs.size() >= 3);
  TempDir other;
  std::filesystem::copy(dir.store(), other.store());
  const std::string other_seg = other.store() + "/" + std::filesystem::path(segs[1]).filename().string();
  FlipByte(other_seg, 12);  // header row_bytes
  ExpectOpenFails(SmallOptions(other.store(), kRowBytes), Status::Code::kCorruption, other_seg, "header checksum");

  REQUIRE(::truncate(segs[0].c_str(), 3 * 4096) == 0);
  ExpectOpenFails(opts, Status::Code::kCorruption, segs[0], "truncated");
  REQUIRE(::truncate(segs[0].c_str(), 0) == 0);
  ExpectOpenFails(opts, Status::Code::kCorruption, segs[0], "truncated");
  std::filesystem::remove(segs[0]);
  ExpectOpenFails(opts, Status::Code::kCorruption, segs[0], "missing");
}

TEST_CASE("ssd: a damaged or truncated manifest fails the open") {
  TempDir dir;
  const SsdOptions opts = SmallOptions(dir.store(), kRowBytes);
  BuildStore(opts);
  const std::string manifest = dir.store() + "/" + ssd::kManifestName;
  std::string good;
  {
    std::ifstream in(manifest, std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), {});
  }
  FlipByte(manifest, 40);
  ExpectOpenFails(opts, Status::Code::kCorruption, manifest, "checksum");
  REQUIRE(::truncate(manifest.c_str(), static_cast<off_t>(good.size() - 7)) == 0);
  ExpectOpenFails(opts, Status::Code::kCorruption, manifest, "bytes");
  REQUIRE(::truncate(manifest.c_str(), 10) == 0);
  ExpectOpenFails(opts, Status::Code::kCorruption, manifest, "truncated");
}

TEST_CASE("ssd: torn tails and leftover files are dropped, synced rows kept") {
  TempDir dir;
  const SsdOptions opts = SmallOptions(dir.store(), kRowBytes);
  const Model model = BuildStore(opts);
  const std::vector<std::string> segs = SegmentPaths(dir.store());
  {
    // Garbage after the synced records of the newest segment: a torn, unsynced append.
    std::ofstream tail(segs.back(), std::ios::binary | std::ios::app);
    tail << std::string(6000, '\x7f');
    std::ofstream leftover(dir.store() + "/" + ssd::SegmentFileName(999), std::ios::binary);
    leftover << "half-written compaction output";
    std::ofstream tmp(dir.store() + "/" + ssd::kManifestTmpName, std::ios::binary);
    tmp << "half-written manifest";
  }
  auto store = OpenOrDie(opts);
  ExpectMatches(*store, model);
  CHECK(!std::filesystem::exists(dir.store() + "/" + ssd::SegmentFileName(999)));
  CHECK(!std::filesystem::exists(dir.store() + "/" + ssd::kManifestTmpName));
  // New files never reuse the leftover's number.
  PutRows(*store, {1}, 9, nullptr);
  REQUIRE(store->Sync().ok());
  CHECK(SegmentPaths(dir.store()).back() > dir.store() + "/" + ssd::SegmentFileName(999));
}

}  // namespace strata::ssd_test
