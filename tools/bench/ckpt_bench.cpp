// ckpt_bench: checkpoint write and read bandwidth against the disk's own sequential
// bandwidth, measured in the same run on the same directory. The model is --gb GB (1e9
// bytes) of rows of --dim (common/row.h layout), seeded, spread by OwnerRank over two
// simulated ranks' in-memory stores, so a checkpoint is two rank files plus meta.h5, as a
// 2-rank job writes it. Each of --runs rounds measures, in this order:
//   disk write   one file of the model's size, O_DIRECT writes, then fdatasync
//   disk read    the same file read back with O_DIRECT reads (both: disk_bandwidth.h, the
//                faster of 4 and 16 MiB requests)
//   ckpt write   WriteRankRows for both ranks, WriteMeta, PublishCheckpoint (all fsyncs)
//   ckpt read    ReadMeta, then LoadOwnedRows for both ranks into a sink that checksums
//                the rows; the checkpoint's files are first dropped from the page cache
//                (posix_fadvise DONTNEED after fsync), and mincore says whether that worked
// Bandwidths are checkpoint bytes on disk (rows, keys and HDF5 overhead) over seconds; the
// per-run lines add the CPU seconds of each phase. Figures are medians over the rounds. The read
// is checked: every row comes back once with the bytes that were written. The last line
// is, for scripts:
//   ckpt_bench: write_fraction=X read_fraction=Y model_gb=Z
// Each checkpoint is deleted after its read, outside the timed regions, and everything is
// removed at the end. Peak memory is about 1.4 times the model (the stores' hash maps).
//
//   build/bench/ckpt_bench [--gb 2] [--dim 16] [--dir .] [--runs 3]
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxopts.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "disk_bandwidth.h"
#include "strata/ckpt/checkpoint.h"
#include "strata/common/partition.h"
#include "strata/model/dense_model.h"
#include "strata/store/row_store.h"

namespace {

namespace fs = std::filesystem;
using namespace strata;
using Clock = std::chrono::steady_clock;
constexpr int kRanks = 2;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
// CPU seconds (user, system) this process has used, to tell CPU-bound phases from waits.
struct Cpu {
  double user = 0, sys = 0;
  static Cpu Now() {
    struct rusage ru;
    ::getrusage(RUSAGE_SELF, &ru);
    return {ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6, ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6};
  }
  Cpu operator-(const Cpu& o) const { return {user - o.user, sys - o.sys}; }
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "ckpt_bench: %s\n", what.c_str());
  std::exit(1);
}
void Check(const Status& st) {
  if (!st.ok()) Die(st.ToString());
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Order-independent digest of a set of rows: the sum of a mix of each row's key and words.
uint64_t RowDigest(uint64_t key, const uint8_t* row, size_t bytes) {
  uint64_t h = Mix64(key);
  for (size_t i = 0; i + 8 <= bytes; i += 8) {
    uint64_t w;
    std::memcpy(&w, row + i, 8);
    h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
  }
  return h;
}

struct Model {
  ModelSpec spec;
  RowLayout layout;
  std::vector<std::unique_ptr<RowStore>> stores;
  uint64_t rows = 0, digest = 0;
  double bytes() const { return static_cast<double>(rows * layout.bytes()); }
};

// Fills the stores with `rows` seeded rows (embedding and state small floats, freq, pass).
Model MakeModel(double gb, int dim) {
  Model m;
  m.spec.embedding_dim = dim;
  m.layout = RowLayout(dim, dim);
  m.rows = static_cast<uint64_t>(gb * 1e9) / m.layout.bytes();
  for (int r = 0; r < kRanks; ++r) m.stores.push_back(NewMemoryRowStore(m.layout.bytes()));
  constexpr size_t kBatch = 1 << 16;
  std::vector<uint64_t> keys[kRanks];
  std::vector<uint8_t> rows[kRanks];
  uint64_t state = 0x2545F4914F6CDD1DULL;
  auto flush = [&](int r) {
    Check(m.stores[r]->Put(keys[r].data(), keys[r].size(), rows[r].data()));
    keys[r].clear();
    rows[r].clear();
  };
  std::vector<uint8_t> row(m.layout.bytes());
  for (uint64_t i = 0; i < m.rows; ++i) {
    const uint64_t key = SlotKey(static_cast<int>(i % 26), i);
    float* f = RowLayout::Embedding(row.data());
    for (size_t j = 0; j < m.layout.floats(); ++j) {
      state ^= state << 13, state ^= state >> 7, state ^= state << 17;
      f[j] = static_cast<float>(static_cast<int64_t>(state >> 40) - (1 << 23)) * 0x1p-26f;
    }
    m.layout.SetFreq(row.data(), static_cast<uint32_t>(state % 1000));
    m.layout.SetLastPass(row.data(), 1);
    m.digest += RowDigest(key, row.data(), row.size());
    const int r = OwnerRank(key, kRanks);
    keys[r].push_back(key);
    rows[r].insert(rows[r].end(), row.begin(), row.end());
    if (keys[r].size() == kBatch) flush(r);
  }
  for (int r = 0; r < kRanks; ++r) flush(r);
  return m;
}

// Drops every file under dir from the page cache; returns the fraction of their pages
// still resident afterwards (mincore), so the output can say whether the drop worked.
double DropFromPageCache(const std::string& dir) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  uint64_t pages = 0, resident = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    const int fd = ::open(e.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) Die("open " + e.path().string() + ": " + std::strerror(errno));
    struct stat sb;
    if (::fstat(fd, &sb) != 0 || ::fdatasync(fd) != 0 || ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) {
      Die("dropping " + e.path().string() + " from the page cache: " + std::strerror(errno));
    }
    const size_t len = static_cast<size_t>(sb.st_size);
    if (len > 0) {
      void* map = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, 0);
      if (map == MAP_FAILED) Die("mmap " + e.path().string());
      std::vector<unsigned char> vec((len + page - 1) / page);
      if (::mincore(map, len, vec.data()) != 0) Die("mincore " + e.path().string());
      for (unsigned char v : vec) resident += v & 1;
      pages += vec.size();
      ::munmap(map, len);
    }
    ::close(fd);
  }
  return pages ? static_cast<double>(resident) / pages : 0;
}

ckpt::CheckpointMeta MakeMeta(const Model& m) {
  ckpt::CheckpointMeta meta;
  meta.flags = "--embedding-dim=" + std::to_string(m.spec.embedding_dim);
  meta.model = m.spec;
  meta.progress.pass = 1;
  meta.ranks = kRanks;
  meta.workers = kRanks;
  meta.data_position.assign(kRanks, 0);
  meta.dense.params.assign(DenseModel(m.spec).num_params(), 0.5f);
  meta.dense.m = meta.dense.v = meta.dense.params;
  meta.rank_files.resize(kRanks);
  return meta;
}

// Full checkpoint of the model as pass `pass`, keeping the others (the caller deletes them
// outside the timed region); returns seconds.
double WriteCheckpoint(Model& m, const std::string& dir, int64_t pass) {
  const auto t = Clock::now();
  ckpt::CheckpointMeta meta = MakeMeta(m);
  meta.progress.pass = pass;
  const std::string name = ckpt::CheckpointName(pass), tmp = dir + "/" + ckpt::TmpName(name);
  for (int r = 0; r < kRanks; ++r) Check(ckpt::WriteRankRows(tmp, r, m.layout, *m.stores[r], 0, &meta.rank_files[r]));
  Check(ckpt::WriteMeta(tmp, meta));
  Check(ckpt::PublishCheckpoint(dir, ckpt::TmpName(name), name, 0));
  return Since(t);
}

// Loads every rank's rows from the checkpoint LATEST names and checks them; returns seconds.
double ReadCheckpoint(const Model& m, const std::string& ckpt_path) {
  const auto t = Clock::now();
  ckpt::CheckpointMeta meta;
  Check(ckpt::ReadMeta(ckpt_path, &meta));
  uint64_t rows = 0, digest = 0;
  const size_t bytes = m.layout.bytes();
  for (int r = 0; r < kRanks; ++r) {
    Check(ckpt::LoadOwnedRows(ckpt_path, meta, r, kRanks, [&](const uint64_t* k, size_t n, const uint8_t* row) {
      for (size_t i = 0; i < n; ++i) digest += RowDigest(k[i], row + i * bytes, bytes);
      rows += n;
      return Status::OK();
    }));
  }
  const double secs = Since(t);
  if (rows != m.rows || digest != m.digest) Die("read back rows or contents differ from the model");
  return secs;
}

uint64_t DirBytes(const std::string& dir) {
  uint64_t n = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) n += e.file_size();
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options cli("ckpt_bench", "checkpoint write/read bandwidth against the disk's sequential bandwidth");
  cli.add_options()("gb", "model size in GB of rows (1e9 bytes)", cxxopts::value<double>()->default_value("2"))(
      "dim", "embedding dim", cxxopts::value<int>()->default_value("16"))(
      "dir", "parent directory for the bench files (on the disk under test)", cxxopts::value<std::string>()->default_value("."))(
      "runs", "rounds; figures are medians", cxxopts::value<int>()->default_value("3"))("h,help", "usage");
  const auto args = cli.parse(argc, argv);
  if (args.count("help")) {
    std::printf("%s\n", cli.help().c_str());
    return 0;
  }
  const double gb = args["gb"].as<double>();
  const int dim = args["dim"].as<int>(), runs = args["runs"].as<int>();
  if (gb <= 0 || dim < 1 || runs < 1) Die("--gb, --dim and --runs must be positive");
  const std::string root = args["dir"].as<std::string>() + "/ckpt_bench." + std::to_string(::getpid());
  std::error_code ec;
  fs::create_directories(root + "/ckpt", ec);
  if (ec) Die("cannot create " + root + ": " + ec.message());

  auto t = Clock::now();
  Model m = MakeModel(gb, dim);
  std::printf("model: %llu rows of %zu bytes (dim %d) = %.2f GB over %d rank stores, filled in %.1f s\n",
              static_cast<unsigned long long>(m.rows), m.layout.bytes(), dim, m.bytes() / 1e9, kRanks, Since(t));

  std::vector<double> disk_w, disk_r, ckpt_w, ckpt_r;
  uint64_t file_bytes = 0;
  for (int run = 0; run < runs; ++run) {
    const auto [dw, dr] = bench::MeasureDiskBandwidth(root + "/seq.tmp", static_cast<uint64_t>(m.bytes()));
    Cpu cpu = Cpu::Now();
    const double ws = WriteCheckpoint(m, root + "/ckpt", run + 1);
    const Cpu write_cpu = Cpu::Now() - cpu;
    const std::string ckpt_path = root + "/ckpt/" + ckpt::CheckpointName(run + 1);
    file_bytes = DirBytes(ckpt_path);
    const double resident = DropFromPageCache(ckpt_path);
    cpu = Cpu::Now();
    const double rs = ReadCheckpoint(m, ckpt_path);
    const Cpu read_cpu = Cpu::Now() - cpu;
    fs::remove_all(ckpt_path, ec);  // untimed: the next write measures writing, not deleting
    disk_w.push_back(dw / 1e9);
    disk_r.push_back(dr / 1e9);
    ckpt_w.push_back(file_bytes / ws / 1e9);
    ckpt_r.push_back(file_bytes / rs / 1e9);
    std::printf("run %d: disk write %.2f GB/s, read %.2f GB/s | checkpoint write %.2f s (cpu user %.2f s, sys %.2f s) = "
                "%.2f GB/s, read %.2f s (cpu user %.2f s, sys %.2f s) = %.2f GB/s | page cache drop before the read: %.1f%% of pages still "
                "resident (%s)\n",
                run + 1, disk_w.back(), disk_r.back(), ws, write_cpu.user, write_cpu.sys, ckpt_w.back(), rs, read_cpu.user,
                read_cpu.sys, ckpt_r.back(),
                100 * resident, resident < 0.01 ? "read came from disk" : "drop did NOT work, read partly cached");
  }
  fs::remove_all(root, ec);

  const double w = Median(ckpt_w), r = Median(ckpt_r), dw = Median(disk_w), dr = Median(disk_r);
  std::printf("medians of %d runs (GB/s of checkpoint bytes: %.2f GB on disk for %.2f GB of rows):\n", runs,
              file_bytes / 1e9, m.bytes() / 1e9);
  std::printf("  %-34s %6.2f GB/s\n", "disk sequential write (O_DIRECT)", dw);
  std::printf("  %-34s %6.2f GB/s\n", "checkpoint write (fsynced)", w);
  std::printf("  %-34s %6.2f GB/s\n", "disk sequential read (O_DIRECT)", dr);
  std::printf("  %-34s %6.2f GB/s\n", "checkpoint read (cold, verified)", r);
  std::printf("ckpt_bench: write_fraction=%.2f read_fraction=%.2f model_gb=%.2f\n", w / dw, r / dr, m.bytes() / 1e9);
  return 0;
}
