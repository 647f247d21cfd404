// ssd_bench: SSD-PS against RocksDB on one workload in one run, plus the disk's own
// sequential write bandwidth (disk_bandwidth.h). Both stores bypass the page cache for
// reads (O_DIRECT for SSD-PS, use_direct_reads for RocksDB); RocksDB gets a 64 MB block
// cache, 10-bit bloom filters and no compression. Workload: --keys rows of 64 bytes loaded
// (synced at the end), then rounds of one batched get of --batch distinct keys drawn
// Zipf(1.05) over the key space (hot ranks scattered over the keys) followed by a batched
// put of the same keys with new values and a sync (RocksDB: a WriteBatch written with sync=true). The clocks
// time the stores' calls, not the making of the rows. SSD-PS writes with PutKnown, told
// which keys it holds: by the round's get, and none while loading, as the MEM-PS tells it
// in training (RocksDB needs no such hint: its puts are blind). Rounds run until SSD-PS's
// compactor has completed 3 compaction cycles (a cycle: one background run that picked
// victims, rewrote them and committed), or exactly --rounds when given; RocksDB runs the
// same rounds on the same keys. The last line is, for scripts:
//   ssd_bench: get_ratio=X put_ratio=Y space_amp=Z write_amp=W index_bytes_per_key=I
// (ratios are SSD-PS keys/s over RocksDB's; the rest are SSD-PS's own, the index bytes as
// its index allocated them).
//
//   build/bench/ssd_bench [--keys 20000000] [--rounds 0] [--batch 200000] [--dir .]
//                         [--compact-threshold X] [--threads 0 (the machine's)]
#include <fcntl.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cxxopts.hpp>
#include <filesystem>
#include <numeric>
#include <random>
#include <unordered_set>

#include "disk_bandwidth.h"
#include "strata/ssd/ssd_store.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kRowBytes = 64;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "ssd_bench: %s\n", what.c_str());
  std::exit(1);
}

// Zipf(s) ranks in [1, n] by rejection-inversion (Hoermann and Derflinger 1996).
class Zipf {
 public:
  Zipf(uint64_t n, double s) : n_(n), s_(s) {
    h_x1_ = HIntegral(1.5) - 1.0;
    h_n_ = HIntegral(static_cast<double>(n) + 0.5);
    cut_ = 2.0 - HIntegralInverse(HIntegral(2.5) - H(2.0));
  }
  uint64_t operator()(std::mt19937_64& rng) {
    std::uniform_real_distribution<double> uni(0.0, 1.0);
    for (;;) {
      const double u = h_n_ + uni(rng) * (h_x1_ - h_n_);
      const double x = HIntegralInverse(u);
      const uint64_t k = static_cast<uint64_t>(std::clamp(x + 0.5, 1.0, static_cast<double>(n_)));
      if (static_cast<double>(k) - x <= cut_ || u >= HIntegral(static_cast<double>(k) + 0.5) - H(static_cast<double>(k))) {
        return k;
      }
    }
  }

 private:
  static double Helper1(double x) { return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x)); }
  static double Helper2(double x) { return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1 + x * 0.5 * (1 + x / 3 * (1 + 0.25 * x)); }
  double H(double x) const { return std::exp(-s_ * std::log(x)); }
  double HIntegral(double x) const { const double lx = std::log(x); return Helper2((1 - s_) * lx) * lx; }
  double HIntegralInverse(double x) const { return std::exp(Helper1(std::max(-1.0, x * (1 - s_))) * x); }

  uint64_t n_;
  double s_, h_x1_ = 0, h_n_ = 0, cut_ = 0;
};

// One round's keys: `batch` distinct Zipf draws, rank r mapped to key (r - 1) * mult mod n.
std::vector<uint64_t> DrawRound(Zipf& zipf, std::mt19937_64& rng, uint64_t n, uint64_t mult, size_t batch) {
  std::unordered_set<uint64_t> seen;
  std::vector<uint64_t> keys;
  while (keys.size() < batch) {
    const uint64_t key = static_cast<uint64_t>((static_cast<unsigned __int128>(zipf(rng) - 1) * mult) % n);
    if (seen.insert(key).second) keys.push_back(key);
  }
  return keys;
}

void FillRow(uint8_t* row, uint64_t key, uint64_t version) {
  std::memcpy(row, &key, 8);
  std::memcpy(row + 8, &version, 8);
  for (size_t i = 16; i < kRowBytes; ++i) row[i] = static_cast<uint8_t>(key * 31 + version + i);
}

// The rows a put writes, made before its clock starts: the stores' time is theirs alone.
std::vector<uint8_t> RowsOf(const std::vector<uint64_t>& keys, uint64_t version) {
  std::vector<uint8_t> rows(keys.size() * kRowBytes);
  for (size_t i = 0; i < keys.size(); ++i) FillRow(rows.data() + i * kRowBytes, keys[i], version);
  return rows;
}

struct Result {
  double load_secs = 0, get_secs = 0, put_secs = 0;
  uint64_t gets = 0, puts = 0, bad_rows = 0;
  double space_amp = 0, write_amp = 0, index_bytes_per_key = 0, write_bw = 0;
  uint64_t compactions = 0;
};

class Workload {
 public:
  virtual ~Workload() = default;
  // rows: keys.size() rows of kRowBytes. after_get: keys are those of the last Get (a
  // round), else new (the load).
  virtual void Put(const std::vector<uint64_t>& keys, const std::vector<uint8_t>& rows, bool sync, bool after_get) = 0;
  virtual void Get(const std::vector<uint64_t>& keys, std::vector<uint8_t>* rows) = 0;
  virtual uint64_t Compactions() = 0;
};

class SsdWorkload final : public Workload {
 public:
  explicit SsdWorkload(const strata::SsdOptions& o) {
    const strata::Status st = strata::OpenSsdStore(o, &store_);
    if (!st.ok()) Die(st.ToString());
  }
  void Put(const std::vector<uint64_t>& keys, const std::vector<uint8_t>& rows, bool sync, bool after_get) override {
    if (!after_get) found_.assign(keys.size(), 0);
    Check(store_->PutKnown(keys.data(), keys.size(), rows.data(), found_.data()));
    if (sync) Check(store_->Sync());
  }
  void Get(const std::vector<uint64_t>& keys, std::vector<uint8_t>* rows) override {
    found_.resize(keys.size());
    Check(store_->Get(keys.data(), keys.size(), rows->data(), found_.data()));
  }
  uint64_t Compactions() override { return store_->stats().compactions; }
  strata::SsdStore& store() { return *store_; }

 private:
  static void Check(const strata::Status& st) { if (!st.ok()) Die(st.ToString()); }
  std::unique_ptr<strata::SsdStore> store_;
  std::vector<uint8_t> found_;
};

class RocksWorkload final : public Workload {
 public:
  explicit RocksWorkload(const std::string& dir) {
    rocksdb::Options o;
    o.create_if_missing = true;
    o.compression = rocksdb::kNoCompression;
    o.use_direct_reads = true;
    o.statistics = rocksdb::CreateDBStatistics();
    rocksdb::BlockBasedTableOptions t;
    t.block_cache = rocksdb::NewLRUCache(64 << 20);
    t.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
    o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
    stats_ = o.statistics;
    rocksdb::DB* db = nullptr;
    const rocksdb::Status st = rocksdb::DB::Open(o, dir, &db);
    if (!st.ok()) Die("rocksdb open " + dir + ": " + st.ToString());
    db_.reset(db);
  }
  void Put(const std::vector<uint64_t>& keys, const std::vector<uint8_t>& rows, bool sync, bool) override {
    rocksdb::WriteBatch batch;
    for (size_t i = 0; i < keys.size(); ++i) {
      const uint64_t be = __builtin_bswap64(keys[i]);
      batch.Put(rocksdb::Slice(reinterpret_cast<const char*>(&be), 8),
                rocksdb::Slice(reinterpret_cast<const char*>(rows.data() + i * kRowBytes), kRowBytes));
    }
    rocksdb::WriteOptions w;
    w.sync = sync;
    const rocksdb::Status st = db_->Write(w, &batch);
    if (!st.ok()) Die("rocksdb write: " + st.ToString());
  }
  void Get(const std::vector<uint64_t>& keys, std::vector<uint8_t>* rows) override {
    std::vector<uint64_t> be(keys.size());
    std::vector<rocksdb::Slice> slices(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      be[i] = __builtin_bswap64(keys[i]);
      slices[i] = rocksdb::Slice(reinterpret_cast<const char*>(&be[i]), 8);
    }
    std::vector<rocksdb::PinnableSlice> values(keys.size());
    std::vector<rocksdb::Status> statuses(keys.size());
    db_->MultiGet(rocksdb::ReadOptions(), db_->DefaultColumnFamily(), keys.size(), slices.data(), values.data(), statuses.data());
    for (size_t i = 0; i < keys.size(); ++i) {
      if (statuses[i].ok() && values[i].size() == kRowBytes) std::memcpy(rows->data() + i * kRowBytes, values[i].data(), kRowBytes);
    }
  }
  uint64_t Compactions() override { return 0; }
  uint64_t Property(const std::string& name) {
    uint64_t v = 0;
    db_->GetIntProperty(name, &v);
    return v;
  }
  uint64_t Ticker(rocksdb::Tickers t) { return stats_->getTickerCount(t); }
  void Flush() { db_->Flush(rocksdb::FlushOptions()); }

 private:
  std::unique_ptr<rocksdb::DB> db_;
  std::shared_ptr<rocksdb::Statistics> stats_;
};

// Loads every key, then runs `rounds` (or until `until_cycles` compactions when rounds is 0).
Result Run(Workload& w, uint64_t n, size_t batch, int rounds, int until_cycles, uint64_t seed, int* rounds_run) {
  Result r;
  std::vector<uint64_t> keys;
  for (uint64_t at = 0; at < n; at += batch) {
    keys.resize(std::min<uint64_t>(batch, n - at));
    std::iota(keys.begin(), keys.end(), at);
    const std::vector<uint8_t> rows = RowsOf(keys, 0);
    const auto t = Clock::now();
    w.Put(keys, rows, at + batch >= n, false);
    r.load_secs += Since(t);
  }
  uint64_t mult = 2654435761ull;
  while (std::gcd(mult, n) != 1) mult += 2;
  Zipf zipf(n, 1.05);
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> rows;
  int round = 0;
  for (; rounds > 0 ? round < rounds : (w.Compactions() < static_cast<uint64_t>(until_cycles) && round < 1000); ++round) {
    keys = DrawRound(zipf, rng, n, mult, batch);
    rows.assign(keys.size() * kRowBytes, 0);
    auto t = Clock::now();
    w.Get(keys, &rows);
    r.get_secs += Since(t);
    for (size_t i = 0; i < keys.size(); ++i) r.bad_rows += std::memcmp(rows.data() + i * kRowBytes, &keys[i], 8) != 0;
    const std::vector<uint8_t> put_rows = RowsOf(keys, static_cast<uint64_t>(round) + 1);
    t = Clock::now();
    w.Put(keys, put_rows, true, true);
    r.put_secs += Since(t);
    r.gets += keys.size();
    r.puts += keys.size();
  }
  *rounds_run = round;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options cli("ssd_bench", "SSD-PS against RocksDB: batched Zipf gets and puts");
  cli.add_options()("keys", "rows loaded", cxxopts::value<uint64_t>()->default_value("20000000"))(
      "rounds", "get+put rounds; 0 = until 3 SSD-PS compaction cycles", cxxopts::value<int>()->default_value("0"))(
      "batch", "distinct keys per round", cxxopts::value<size_t>()->default_value("200000"))(
      "dir", "parent directory for the bench data (on the disk under test)", cxxopts::value<std::string>()->default_value("."))(
      "segment-mb", "SSD-PS segment size", cxxopts::value<uint64_t>()->default_value("64"))(
      "queue-depth", "SSD-PS reads in flight", cxxopts::value<int>()->default_value("64"))(
      "compact-threshold", "SSD-PS stale fraction that makes a segment a victim",
      cxxopts::value<double>()->default_value(std::to_string(strata::SsdOptions().compact_threshold)))(
      "seed", "Zipf draw seed", cxxopts::value<uint64_t>()->default_value("1"))(
      "threads", "SSD-PS threads for a large put's index updates (0: the machine's)",
      cxxopts::value<int>()->default_value("0"))("h,help", "usage");
  const auto args = cli.parse(argc, argv);
  if (args.count("help")) {
    std::puts(cli.help().c_str());
    return 0;
  }
  const uint64_t n = args["keys"].as<uint64_t>();
  const size_t batch = std::min<size_t>(args["batch"].as<size_t>(), n / 2);
  if (n < 2 || batch == 0) Die("--keys must be at least 2");
  std::string tmpl = args["dir"].as<std::string>() + "/ssd-bench-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) Die("cannot create a directory under --dir " + args["dir"].as<std::string>());
  const std::string root = tmpl;

  const double disk_bw =
      strata::bench::MeasureDiskBandwidth(root + "/seq.tmp", std::clamp<uint64_t>(n * 84, 256ull << 20, 1ull << 30)).write;

  strata::SsdOptions o;
  o.dir = root + "/ssd";
  o.row_bytes = kRowBytes;
  o.segment_bytes = args["segment-mb"].as<uint64_t>() << 20;
  o.direct_io = true;
  o.queue_depth = args["queue-depth"].as<int>();
  o.compact_threshold = args["compact-threshold"].as<double>();
  o.threads = args["threads"].as<int>() > 0 ? args["threads"].as<int>() : static_cast<int>(std::thread::hardware_concurrency());
  int rounds = 0;
  Result ssd;
  {
    SsdWorkload w(o);
    ssd = Run(w, n, batch, args["rounds"].as<int>(), 3, args["seed"].as<uint64_t>(), &rounds);
    const strata::StoreStats s = w.store().stats();
    ssd.space_amp = s.space_amplification();
    ssd.write_amp = s.write_amplification();
    ssd.index_bytes_per_key = s.index_bytes_per_key();
    ssd.compactions = s.compactions;
    ssd.write_bw = static_cast<double>(n * kRowBytes) * (84.0 / kRowBytes) / ssd.load_secs;
  }
  Result rdb;
  {
    RocksWorkload w(root + "/rocksdb");
    int unused = 0;
    rdb = Run(w, n, batch, rounds, 0, args["seed"].as<uint64_t>(), &unused);
    w.Flush();  // so the space it uses is in SST files, not the memtable
    const double logical = static_cast<double>(n) * kRowBytes;
    rdb.space_amp = static_cast<double>(w.Property(rocksdb::DB::Properties::kTotalSstFilesSize)) / logical;
    const double user = static_cast<double>(n + rdb.puts) * kRowBytes;
    rdb.write_amp = static_cast<double>(w.Ticker(rocksdb::WAL_FILE_BYTES) + w.Ticker(rocksdb::FLUSH_WRITE_BYTES) +
                                        w.Ticker(rocksdb::COMPACT_WRITE_BYTES)) / user;
    rdb.index_bytes_per_key = static_cast<double>(w.Property(rocksdb::DB::Properties::kEstimateTableReadersMem)) / static_cast<double>(n);
  }
  std::error_code ec;
  std::filesystem::remove_all(root, ec);

  const auto rate = [](uint64_t k, double s) { return s > 0 ? static_cast<double>(k) / s : 0.0; };
  std::printf("workload: %llu keys x %zu B rows, %d rounds of %zu Zipf(1.05) keys, %llu SSD-PS compaction cycles, "
              "SSD-PS index threads %d\n",
              static_cast<unsigned long long>(n), kRowBytes, rounds, batch, static_cast<unsigned long long>(ssd.compactions),
              o.threads);
  std::printf("%-8s %12s %12s %10s %10s %14s %10s\n", "store", "get keys/s", "put keys/s", "space_amp", "write_amp", "index B/key", "bad rows");
  for (const auto& [name, r] : {std::pair<const char*, const Result&>{"SSD-PS", ssd}, {"RocksDB", rdb}}) {
    std::printf("%-8s %12.0f %12.0f %10.3f %10.3f %14.2f %10llu\n", name, rate(r.gets, r.get_secs), rate(r.puts, r.put_secs),
                r.space_amp, r.write_amp, r.index_bytes_per_key, static_cast<unsigned long long>(r.bad_rows));
  }
  std::printf("sequential write: disk %.2f GB/s, SSD-PS load appends %.2f GB/s = %.0f%% of the disk\n", disk_bw / 1e9,
              ssd.write_bw / 1e9, 100.0 * ssd.write_bw / disk_bw);
  const double get_ratio = rate(ssd.gets, ssd.get_secs) / std::max(1e-9, rate(rdb.gets, rdb.get_secs));
  const double put_ratio = rate(ssd.puts, ssd.put_secs) / std::max(1e-9, rate(rdb.puts, rdb.put_secs));
  std::printf("ssd_bench: get_ratio=%.2f put_ratio=%.2f space_amp=%.3f write_amp=%.3f index_bytes_per_key=%.2f\n",
              get_ratio, put_ratio, ssd.space_amp, ssd.write_amp, ssd.index_bytes_per_key);
  return ssd.bad_rows + rdb.bad_rows == 0 ? 0 : 1;
}
