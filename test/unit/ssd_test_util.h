// Shared helpers for the SSD-PS tests: a self-deleting temporary directory, deterministic
// row contents, small store options that force many segments and compactions, and a
// check of a store against an std::unordered_map model.
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include "strata/common/hash.h"
#include "strata/ssd/ssd_store.h"

namespace strata::ssd_test {

using Model = std::unordered_map<uint64_t, std::vector<uint8_t>>;

// A fresh directory, removed with everything in it at scope exit. On tmpfs (/dev/shm) when
// `prefer_tmpfs` and it is writable: fsync costs nothing there, and the crash tests kill
// processes, not power, so the page cache is as good as a disk. Direct-I/O tests need a
// real filesystem and pass false.
class TempDir {
 public:
  explicit TempDir(bool prefer_tmpfs = true) {
    std::filesystem::path base = std::filesystem::temp_directory_path();
    if (prefer_tmpfs && ::access("/dev/shm", W_OK) == 0) base = "/dev/shm";
    std::string tmpl = (base / "strata-ssd-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string store() const { return path_ + "/store"; }

 private:
  std::string path_;
};

// The row written for `key` at version `version`: distinct for every (key, version).
inline std::vector<uint8_t> RowFor(uint64_t key, uint64_t version, size_t row_bytes) {
  std::vector<uint8_t> row(row_bytes);
  uint64_t s = Mix64(key * 0x100000001b3ull ^ version);
  for (size_t i = 0; i < row_bytes; i += 8) {
    s = Mix64(s);
    std::memcpy(row.data() + i, &s, std::min<size_t>(8, row_bytes - i));
  }
  return row;
}

// Small segments and buffers so a few thousand rows span many files and compactions.
inline SsdOptions SmallOptions(const std::string& dir, size_t row_bytes) {
  SsdOptions o;
  o.dir = dir;
  o.row_bytes = row_bytes;
  o.segment_bytes = 64 << 10;
  o.write_buffer_bytes = 16 << 10;
  o.queue_depth = 8;
  return o;
}

inline void PutRows(SsdStore& store, const std::vector<uint64_t>& keys, uint64_t version, Model* model) {
  const size_t rb = store.row_bytes();
  std::vector<uint8_t> rows(keys.size() * rb);
  for (size_t i = 0; i < keys.size(); ++i) {
    std::vector<uint8_t> row = RowFor(keys[i], version, rb);
    std::memcpy(rows.data() + i * rb, row.data(), rb);
    if (model != nullptr) (*model)[keys[i]] = std::move(row);
  }
  REQUIRE(store.Put(keys.data(), keys.size(), rows.data()).ok());
}

// Every model key reads back its model row, `absent` keys are not found, and Scan and
// num_keys agree with the model.
inline void ExpectMatches(SsdStore& store, const Model& model, const std::vector<uint64_t>& absent = {}) {
  const size_t rb = store.row_bytes();
  std::vector<uint64_t> keys;
  for (const auto& kv : model) keys.push_back(kv.first);
  keys.insert(keys.end(), absent.begin(), absent.end());
  std::vector<uint8_t> rows(keys.size() * rb);
  std::vector<uint8_t> found(keys.size());
  const Status st = store.Get(keys.data(), keys.size(), rows.data(), found.data());
  REQUIRE_MESSAGE(st.ok(), st.ToString());
  size_t mismatches = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    auto it = model.find(keys[i]);
    if (it == model.end()) {
      mismatches += found[i] != 0;
    } else {
      mismatches += !found[i] || std::memcmp(rows.data() + i * rb, it->second.data(), rb) != 0;
    }
  }
  CHECK(mismatches == 0);
  CHECK(store.num_keys() == model.size());
  size_t visited = 0, scan_mismatches = 0;
  const Status scan = store.Scan([&](uint64_t key, const uint8_t* row) {
    ++visited;
    auto it = model.find(key);
    scan_mismatches += it == model.end() || std::memcmp(row, it->second.data(), rb) != 0;
  });
  REQUIRE_MESSAGE(scan.ok(), scan.ToString());
  CHECK(visited == model.size());
  CHECK(scan_mismatches == 0);
}

// Forks a child that runs child(write_fd) and exits; the parent gets its pid and, in
// *read_fd, the read end of a pipe from it.
template <typename F>
pid_t ForkChild(int* read_fd, F&& child) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  *read_fd = fds[0];
  return pid;
}

inline std::unique_ptr<SsdStore> OpenOrDie(const SsdOptions& opts) {
  std::unique_ptr<SsdStore> store;
  const Status st = OpenSsdStore(opts, &store);
  REQUIRE_MESSAGE(st.ok(), st.ToString());
  return store;
}

}  // namespace strata::ssd_test
