// BufferPool: Take picks by capacity; Give frees the smallest beyond the pool's size.
#include "strata/common/buffer_pool.h"

#include <algorithm>
#include <utility>

#include "strata/common/huge_pages.h"

namespace strata {

std::string BufferPool::Take(size_t bytes) {
  std::string buf;
  {
    const std::lock_guard lock(mu_);
    auto fits = kept_.end(), largest = kept_.end();
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->capacity() >= bytes && (fits == kept_.end() || it->capacity() < fits->capacity())) fits = it;
      if (largest == kept_.end() || it->capacity() > largest->capacity()) largest = it;
    }
    const auto chosen = fits != kept_.end() ? fits : largest;
    if (chosen != kept_.end()) {
      buf = std::move(*chosen);
      kept_.erase(chosen);
    }
  }
  buf.clear();  // so that a buffer too small is freed below, its bytes not copied
  if (buf.capacity() < bytes) {
    buf.reserve(bytes + bytes / 8);
    AdviseHugePages(buf.data(), buf.capacity());
  }
  ResizeToOverwrite(&buf, bytes);
  return buf;
}

void BufferPool::Give(std::string buf) {
  if (buf.capacity() <= std::string().capacity()) return;  // holds no allocation
  std::string dropped;  // freed after the lock (an unmap of many pages)
  const std::lock_guard lock(mu_);
  kept_.push_back(std::move(buf));
  if (kept_.size() <= keep_) return;
  const auto smallest = std::min_element(kept_.begin(), kept_.end(), [](const std::string& a, const std::string& b) {
    return a.capacity() < b.capacity();
  });
  dropped = std::move(*smallest);
  kept_.erase(smallest);
}

size_t BufferPool::kept() const {
  const std::lock_guard lock(mu_);
  return kept_.size();
}

}  // namespace strata
