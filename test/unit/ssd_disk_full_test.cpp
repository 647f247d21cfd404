// SSD-PS on a full disk: a forked child caps its file size with RLIMIT_FSIZE (writes past
// it fail with EFBIG, as on a full filesystem) and keeps writing until the store reports
// it; the error must name the file, reads must keep working and see every accepted put
// (none of the failed one, also when its index updates ran beside its appends: a batch of
// kKeysWorthAThread keys or more), later writes must return the kept error, and a reopen
// must find every synced row.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ssd_test_util.h"
#include "strata/common/spare_threads.h"

namespace strata::ssd_test {
namespace {

constexpr size_t kRowBytes = 64;

struct Rounds {
  uint64_t keys;       // written by round 0
  uint64_t rewritten;  // by each later round
};

// Round 0 writes every key; round r > 0 rewrites `rewritten` of them with version r + 1.
std::vector<uint64_t> RoundKeys(const Rounds& shape, uint64_t r) {
  std::vector<uint64_t> keys;
  const uint64_t n = r == 0 ? shape.keys : shape.rewritten;
  for (uint64_t i = 0; i < n; ++i) keys.push_back(r == 0 ? i : (r * shape.rewritten + i) % shape.keys);
  return keys;
}

SsdOptions DiskFullOptions(const std::string& dir) {
  SsdOptions o = SmallOptions(dir, kRowBytes);
  o.segment_bytes = 1 << 20;
  return o;
}

// Exit codes: 0 all checks held; 10+ which check failed. Reports lines on `report_fd`:
// "synced <rounds>" after each completed Sync, "fail <why>" before a failing exit.
[[noreturn]] void RunChild(const std::string& dir, const Rounds& shape, int report_fd) {
  auto fail = [&](int code, const std::string& why) {
    const std::string line = "fail " + why + "\n";
    (void)!::write(report_fd, line.data(), line.size());
    _exit(code);
  };
  ::signal(SIGXFSZ, SIG_IGN);
  std::unique_ptr<SsdStore> store;
  if (!OpenSsdStore(DiskFullOptions(dir), &store).ok()) fail(10, "open failed");
  Model model;
  Status err;
  for (uint64_t r = 0; r < 40 && err.ok(); ++r) {
    if (r == 1) {
      const rlimit lim{300 << 10, 300 << 10};
      if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) fail(11, "setrlimit failed");
    }
    const std::vector<uint64_t> keys = RoundKeys(shape, r);
    std::vector<uint8_t> rows(keys.size() * kRowBytes);
    for (size_t i = 0; i < keys.size(); ++i) {
      std::memcpy(rows.data() + i * kRowBytes, RowFor(keys[i], r + 1, kRowBytes).data(), kRowBytes);
    }
    err = store->Put(keys.data(), keys.size(), rows.data());
    if (err.ok()) {
      for (size_t i = 0; i < keys.size(); ++i) model[keys[i]] = RowFor(keys[i], r + 1, kRowBytes);
      err = store->Sync();
    }
    const std::string line = "synced " + std::to_string(r + 1) + "\n";
    if (err.ok() && ::write(report_fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
      fail(12, "report");
    }
  }
  if (err.ok()) fail(13, "no error although files are capped");
  if (err.code() != Status::Code::kResourceExhausted) fail(14, "wrong code: " + err.ToString());
  if (err.message().find("seg-") == std::string::npos && err.message().find("MANIFEST") == std::string::npos) {
    fail(15, "error names no file: " + err.ToString());
  }
  // Reads keep working and see every accepted Put.
  std::vector<uint64_t> keys = RoundKeys(shape, 0);
  std::vector<uint8_t> rows(keys.size() * kRowBytes), found(keys.size());
  if (!store->Get(keys.data(), keys.size(), rows.data(), found.data()).ok()) fail(16, "get failed");
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!found[i] || std::memcmp(rows.data() + i * kRowBytes, model[keys[i]].data(), kRowBytes) != 0) {
      fail(17, "wrong row for key " + std::to_string(keys[i]));
    }
  }
  // The error is kept for later writers.
  const Status again = store->Put(keys.data(), 1, rows.data());
  if (again.code() != Status::Code::kResourceExhausted) fail(18, "error not kept: " + again.ToString());
  _exit(0);
}

void CheckDiskFull(const Rounds& shape) {
  TempDir dir;
  int from_child = -1;
  const pid_t pid = ForkChild(&from_child, [&](int to_parent) { RunChild(dir.store(), shape, to_parent); });
  int wstatus = 0;
  REQUIRE(::waitpid(pid, &wstatus, 0) == pid);
  std::string report;
  char buf[256];
  for (ssize_t n; (n = ::read(from_child, buf, sizeof(buf))) > 0;) report.append(buf, static_cast<size_t>(n));
  ::close(from_child);
  uint64_t synced = 0;
  for (size_t at = report.find("synced "); at != std::string::npos; at = report.find("synced ", at + 1)) {
    synced = std::stoull(report.substr(at + 7));
  }
  REQUIRE(WIFEXITED(wstatus));
  CHECK_MESSAGE(WEXITSTATUS(wstatus) == 0, "child check " << WEXITSTATUS(wstatus) << ": " << report);
  CHECK(synced >= 1);

  Model model;
  for (uint64_t r = 0; r < synced; ++r) {
    for (uint64_t key : RoundKeys(shape, r)) model[key] = RowFor(key, r + 1, kRowBytes);
  }
  auto store = OpenOrDie(DiskFullOptions(dir.store()));
  ExpectMatches(*store, model);
}

}  // namespace

TEST_CASE("ssd: a full disk gives a clear error and loses no synced row") {
  CheckDiskFull(Rounds{3000, 500});
}

TEST_CASE("ssd: a full disk under puts large enough to index beside their appends") {
  CheckDiskFull(Rounds{2 * kKeysWorthAThread, kKeysWorthAThread});
}

}  // namespace strata::ssd_test
