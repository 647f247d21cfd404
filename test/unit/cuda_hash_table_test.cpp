// CUDA HBM-PS as a hash table, against a std::unordered_map model: seeded random inserts
// and overwrites, exports compared byte for byte, absent keys, keys that all land in one
// bucket of the GPU table (and the key equal to its empty marker), a key given twice in one
// insert, a full table reported with the pass and sizes (and keeping the rows it had), a
// failed BeginPass, and the table benchmark's own accumulate check; with one and with two
// workers (on two GPUs, or sharing one). Each case
// skips with one line when no CUDA device is visible.
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <unordered_map>
#include <vector>

#include "../../cuda/table_hash.h"
#include "strata/common/partition.h"
#include "strata/common/row.h"
#include "strata/hbm/hbm_ps.h"
#include "cuda_test_util.h"
#ifdef STRATA_WITH_CUDA
#include "../../cuda/table_bench.h"
#endif

namespace strata {
namespace {


// workers on devices 0..G-1 where there are that many GPUs, else all on GPU 0.
std::unique_ptr<HbmPs> NewCuda(int workers) {
  HbmOptions o;
  o.spec.num_slots = 2;
  o.spec.num_dense = 1;
  o.spec.embedding_dim = 4;
  o.spec.mlp = {8};
  o.workers = workers;
  if (workers > CudaDeviceCount()) o.devices.assign(workers, 0);
  o.max_batch = 16;
  std::unique_ptr<HbmPs> ps;
  const Status st = NewCudaHbmPs(o, &ps);
  REQUIRE_MESSAGE(st.ok(), st.ToString());
  return ps;
}

// Keys whose GPU-table bucket agrees in the low 16 bits: one bucket of any table up to
// 65536 slots, so every insert and lookup walks one long probe chain.
std::vector<uint64_t> OneBucketKeys(size_t n) {
  std::vector<uint64_t> keys;
  const uint64_t target = gpu::TableHash(12345) & 0xffff;
  for (uint64_t k = 1; keys.size() < n; ++k) {
    if ((gpu::TableHash(k) & 0xffff) == target) keys.push_back(k);
  }
  return keys;
}

// Drives Insert/Export with seeded batches of distinct keys (new and overwritten) and
// compares every export with the model.
void CheckAgainstModel(HbmPs& ps, const std::vector<uint64_t>& universe, uint64_t seed) {
  const size_t rb = RowLayout(4, 4).bytes();
  std::mt19937_64 rng(seed);
  std::unordered_map<uint64_t, std::vector<uint8_t>> model;
  REQUIRE(ps.BeginPass(7, universe.size()).ok());
  for (int round = 0; round < 6; ++round) {
    std::vector<uint64_t> keys;
    for (uint64_t k : universe) {
      if (rng() % 3 == 0) keys.push_back(k);  // distinct within the call, overlapping across calls
    }
    std::vector<uint8_t> rows(keys.size() * rb);
    for (auto& b : rows) b = static_cast<uint8_t>(rng());
    REQUIRE(ps.Insert(keys.data(), keys.size(), rows.data()).ok());
    for (size_t i = 0; i < keys.size(); ++i) model[keys[i]].assign(rows.begin() + i * rb, rows.begin() + (i + 1) * rb);

    std::vector<uint64_t> present;
    for (const auto& [k, row] : model) present.push_back(k);
    std::vector<uint8_t> out(present.size() * rb);
    REQUIRE(ps.Export(present.data(), present.size(), out.data()).ok());
    for (size_t i = 0; i < present.size(); ++i) {
      CHECK(std::memcmp(&out[i * rb], model[present[i]].data(), rb) == 0);
    }
  }
  for (uint64_t k : universe) {
    if (model.count(k)) continue;
    std::vector<uint8_t> out(rb);
    const Status st = ps.Export(&k, 1, out.data());
    CHECK(st.code() == Status::Code::kNotFound);
    break;
  }
}

TEST_CASE("cuda: HBM-PS table matches an unordered_map model on random keys") {
  if (NoGpu()) return;
  std::vector<uint64_t> universe;
  for (uint64_t i = 0; i < 3000; ++i) universe.push_back(Mix64(i));
  universe.push_back(gpu::kEmptyKey);  // the table's free-slot marker is a legal key too
  universe.push_back(0);
  for (int g = 1; g <= 2; ++g) {
    auto ps = NewCuda(g);
    CheckAgainstModel(*ps, universe, 11 + g);
  }
}

// Rows of rb bytes, row i filled with the byte i + 1.
std::vector<uint8_t> NumberedRows(size_t n, size_t rb) {
  std::vector<uint8_t> rows(n * rb);
  for (size_t i = 0; i < n; ++i) std::memset(&rows[i * rb], static_cast<int>(i + 1), rb);
  return rows;
}

TEST_CASE("cuda: a key given twice in one insert gets one row, its last occurrence's") {
  if (NoGpu()) return;
  const size_t rb = RowLayout(4, 4).bytes();
  const uint64_t a = Mix64(1), b = Mix64(2);
  // Five occurrences of three keys (the empty marker among them) in a table of three rows:
  // a row for each occurrence would not fit.
  const std::vector<uint64_t> keys = {a, gpu::kEmptyKey, a, b, gpu::kEmptyKey, a};
  const std::vector<uint8_t> rows = NumberedRows(keys.size(), rb);
  for (int g = 1; g <= 2; ++g) {
    CAPTURE(g);
    auto ps = NewCuda(g);
    REQUIRE(ps->BeginPass(1, 3).ok());
    const Status st = ps->Insert(keys.data(), keys.size(), rows.data());
    REQUIRE_MESSAGE(st.ok(), st.ToString());
    const std::vector<uint64_t> distinct = {a, gpu::kEmptyKey, b};
    std::vector<uint8_t> out(distinct.size() * rb);
    REQUIRE(ps->Export(distinct.data(), distinct.size(), out.data()).ok());
    CHECK(out[0] == 6);       // a: occurrences 1, 3, 6
    CHECK(out[rb] == 5);      // the empty marker: 2, 5
    CHECK(out[2 * rb] == 4);  // b: 4
  }
}

// Bulk calls cross the bus through bounded pinned chunks: a pass of 48 MB of rows keeps no
// more host memory than two chunks (the bulk calls' and Stage-in's, 8 MB each, grown by half
// at most).
TEST_CASE("cuda: a large pass is inserted, staged and exported through bounded host memory") {
  if (NoGpu()) return;
  const size_t rb = RowLayout(4, 4).bytes(), n = (size_t{48} << 20) / rb;
  std::vector<uint64_t> keys(n);
  for (size_t i = 0; i < n; ++i) keys[i] = Mix64(i);
  const std::vector<uint8_t> rows = NumberedRows(n, rb);
  for (int g = 1; g <= 2; ++g) {
    CAPTURE(g);
    auto ps = NewCuda(g);
    REQUIRE(ps->BeginPass(1, n).ok());
    REQUIRE(ps->Insert(keys.data(), n, rows.data()).ok());
    REQUIRE(ps->BeginStage(2, n).ok());
    REQUIRE(ps->Stage(keys.data(), n, rows.data()).ok());
    std::vector<uint8_t> out(n * rb);
    REQUIRE(ps->Export(keys.data(), n, out.data()).ok());
    CHECK(out == rows);
    REQUIRE(ps->SwapIn().ok());
    std::fill(out.begin(), out.end(), uint8_t{0});
    REQUIRE(ps->Export(keys.data(), n, out.data()).ok());
    CHECK(out == rows);
    CHECK(ps->host_staging_bytes() <= size_t{25} << 20);
  }
}

TEST_CASE("cuda: keys that find no room claim no slot, and the rows already in stay") {
  if (NoGpu()) return;
  auto ps = NewCuda(1);
  const size_t rb = RowLayout(4, 4).bytes();
  REQUIRE(ps->BeginPass(4, 1000).ok());
  std::vector<uint64_t> first, more;
  for (uint64_t i = 0; i < 1000; ++i) first.push_back(Mix64(i));
  for (uint64_t i = 1000; i < 201000; ++i) more.push_back(Mix64(i));
  const std::vector<uint8_t> rows = NumberedRows(first.size(), rb);
  REQUIRE(ps->Insert(first.data(), first.size(), rows.data()).ok());
  const std::vector<uint8_t> extra(more.size() * rb, 7);
  const Status full = ps->Insert(more.data(), more.size(), extra.data());
  CHECK(full.code() == Status::Code::kResourceExhausted);
  // Inserted a pinned chunk at a time: the first chunk finds no room, and the message says
  // which keys of the call it held.
  CHECK(full.message().find("keys of this insert found no room (keys 0 to ") != std::string::npos);
  CHECK(full.message().find("of the 200000 bound for device shard 0") != std::string::npos);
  std::vector<uint8_t> out(first.size() * rb);
  REQUIRE(ps->Export(first.data(), first.size(), out.data()).ok());
  CHECK(out == rows);
  CHECK(ps->Export(more.data(), 1, out.data()).code() == Status::Code::kNotFound);
}

TEST_CASE("cuda: after a BeginPass that failed, batches and bulk calls are errors until the next pass") {
  if (NoGpu()) return;
  auto ps = NewCuda(1);
  const size_t rb = RowLayout(4, 4).bytes();
  const std::vector<uint64_t> keys = {Mix64(5), Mix64(6)};
  const std::vector<uint8_t> rows = NumberedRows(keys.size(), rb);
  REQUIRE(ps->BeginPass(1, 10).ok());
  REQUIRE(ps->Insert(keys.data(), keys.size(), rows.data()).ok());
  // Past the table's row limit on one device, and then past any device's memory.
  for (const size_t expected : {size_t{1} << 33, size_t{4000000000}}) {
    CAPTURE(expected);
    const Status failed = ps->BeginPass(2, expected);
    CHECK(failed.code() != Status::Code::kOk);
    std::vector<uint8_t> out(rows.size());
    const Status exported = ps->Export(keys.data(), keys.size(), out.data());
    CHECK(exported.code() == Status::Code::kInvalidArgument);
    CHECK(exported.message().find("BeginPass failed") != std::string::npos);
    Batch b;
    b.Clear(2, 1);
    b.num_examples = 1;
    b.keys = {keys[0]};
    b.offsets = {0, 1, 1};
    b.dense = {0.5f};
    b.labels = {1.0f};
    WorkerGrads g;
    CHECK(ps->ComputeGradients(0, b, 1.0f, &g).code() == Status::Code::kInvalidArgument);
  }
  REQUIRE(ps->BeginPass(3, 10).ok());
  REQUIRE(ps->Insert(keys.data(), keys.size(), rows.data()).ok());
  std::vector<uint8_t> out(rows.size());
  REQUIRE(ps->Export(keys.data(), keys.size(), out.data()).ok());
  CHECK(out == rows);
}

TEST_CASE("cuda: HBM-PS table handles keys that all land in one bucket") {
  if (NoGpu()) return;
  std::vector<uint64_t> universe = OneBucketKeys(400);
  auto ps = NewCuda(1);
  CheckAgainstModel(*ps, universe, 5);
}

TEST_CASE("cuda: a full HBM-PS table is an error naming the pass and sizes") {
  if (NoGpu()) return;
  auto ps = NewCuda(1);
  const size_t rb = RowLayout(4, 4).bytes();
  REQUIRE(ps->BeginPass(3, 100).ok());
  std::vector<uint64_t> keys;
  for (uint64_t i = 0; i < 300; ++i) keys.push_back(Mix64(i + 77));
  std::vector<uint8_t> rows(keys.size() * rb, 1);
  const Status st = ps->Insert(keys.data(), keys.size(), rows.data());
  CHECK(st.code() == Status::Code::kResourceExhausted);
  CHECK(st.message().find("pass 3") != std::string::npos);
  CHECK(st.message().find("100 rows") != std::string::npos);
}

#ifdef STRATA_WITH_CUDA
TEST_CASE("cuda: table benchmark's accumulates add up exactly") {
  if (NoGpu()) return;
  gpu::TableBenchResult r;
  const Status st = gpu::RunTableBench(5000, 8, 3, 99, &r);
  REQUIRE_MESSAGE(st.ok(), st.ToString());
  CHECK(r.find_keys_per_s > 0);
  CHECK(r.accumulate_keys_per_s > 0);
  CHECK(r.copy_gbps > 0);
}
#endif

TEST_CASE("cuda: without a visible GPU the CUDA backend is a clear DeviceError") {
  if (CudaDeviceCount() > 0) return;
  HbmOptions o;
  std::unique_ptr<HbmPs> ps;
  const Status st = NewCudaHbmPs(o, &ps);
  CHECK(st.code() == Status::Code::kDeviceError);
  CHECK(st.message().find("--device cuda") != std::string::npos);
  CHECK(ps == nullptr);
}

}  // namespace
}  // namespace strata
