// Little helpers to append and read fixed-width values in byte strings sent over Comm.
// Both ends run the same binary on the same architecture, so values travel in host order.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace strata::wire {

template <typename T>
void Put(std::string* out, const T& v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(T));
}

inline void PutBytes(std::string* out, const void* p, size_t n) {
  out->append(static_cast<const char*>(p), n);
}

// Sequential reader over received bytes.
class Reader {
 public:
  explicit Reader(std::string_view s) : p_(s.data()), end_(s.data() + s.size()) {}
  bool done() const { return p_ >= end_; }
  template <typename T>
  T Get() {
    T v;
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    return v;
  }
  const char* Take(size_t n) {
    const char* at = p_;
    p_ += n;
    return at;
  }

 private:
  const char* p_;
  const char* end_;
};

}  // namespace strata::wire
