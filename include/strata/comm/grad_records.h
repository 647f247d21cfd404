// GradRecords: one step's sparse-gradient records (key, count, then dim floats) bound for
// each rank, laid out in rank order in one buffer kept between steps, the layout that
// Comm::AllToAllBytes sends, and the reading of it on arrival. A rank's records keep the
// order they were emitted in. Not thread-safe.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace strata {

class GradRecords {
 public:
  // The bytes of one record with a dim-float gradient.
  static size_t RecordBytes(int dim) { return sizeof(uint64_t) + sizeof(uint32_t) + sizeof(float) * dim; }

  // Lays out the records that visit emits. visit(emit) calls emit(rank, key, count, grad)
  // once for each record; it is called twice (to size each rank's part, then to write it)
  // and must emit the same records both times.
  template <typename Visit>
  void Pack(int ranks, int dim, const Visit& visit) {
    const size_t record = RecordBytes(dim);
    counts_.assign(ranks, 0);
    visit([&](int rank, uint64_t, uint32_t, const float*) { counts_[rank] += static_cast<int64_t>(record); });
    at_.assign(ranks, 0);
    for (int r = 1; r < ranks; ++r) at_[r] = at_[r - 1] + static_cast<size_t>(counts_[r - 1]);
    bytes_.resize(at_.back() + static_cast<size_t>(counts_.back()));
    const size_t grad_bytes = record - sizeof(uint64_t) - sizeof(uint32_t);
    visit([&](int rank, uint64_t key, uint32_t count, const float* grad) {
      char* out = bytes_.data() + at_[rank];
      std::memcpy(out, &key, sizeof(key));
      std::memcpy(out + sizeof(key), &count, sizeof(count));
      std::memcpy(out + sizeof(key) + sizeof(count), grad, grad_bytes);
      at_[rank] += record;
    });
  }

  // Calls fn(key, count, grad) for each record of a part laid out this way (as received), in
  // order.
  template <typename Fn>
  static void ForEach(std::string_view part, int dim, const Fn& fn) {
    const size_t record = RecordBytes(dim);
    for (size_t at = 0; at + record <= part.size(); at += record) {
      const char* p = part.data() + at;
      uint64_t key;
      uint32_t count;
      std::memcpy(&key, p, sizeof(key));
      std::memcpy(&count, p + sizeof(key), sizeof(count));
      fn(key, count, reinterpret_cast<const float*>(p + sizeof(key) + sizeof(count)));
    }
  }

  const char* data() const { return bytes_.data(); }
  const std::vector<int64_t>& byte_counts() const { return counts_; }  // per rank

 private:
  std::vector<char> bytes_;
  std::vector<int64_t> counts_;
  std::vector<size_t> at_;
};

}  // namespace strata
