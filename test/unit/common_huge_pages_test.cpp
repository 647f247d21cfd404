// HugePageAllocator (strata/common/huge_pages.h): large arrays start on a 2 MiB boundary
// and lie in a mapping advised for huge pages (read back from /proc/self/smaps), small ones
// keep their alignment, and a HugeVector keeps its contents through growth and shrinking
// across the 2 MiB threshold; AdviseHugePages advises the whole huge pages of its range, as
// a BufferPool's new buffers are.
#include <doctest/doctest.h>
#include <sys/mman.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "strata/common/buffer_pool.h"
#include "strata/common/huge_pages.h"

namespace strata {
namespace {

// Whether the mapping that holds p has "hg" (MADV_HUGEPAGE) among its VmFlags.
bool AdvisedHuge(const void* p) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= at && at < end;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line.find(" hg") != std::string::npos;
  }
  return false;
}

TEST_CASE("a large HugeVector starts on a huge page in a mapping advised for huge pages") {
  HugeVector<uint64_t> v(kHugePageMin / sizeof(uint64_t) * 3 + 5, 7);
  CHECK(reinterpret_cast<uintptr_t>(v.data()) % kHugePageMin == 0);
  // A kernel built without transparent huge pages refuses the advice (only speed is lost).
  if (std::filesystem::exists("/sys/kernel/mm/transparent_hugepage")) CHECK(AdvisedHuge(v.data()));
  CHECK(v.front() == 7);
  CHECK(v.back() == 7);
  v.back() = 9;  // the last page, past the last whole huge page, is mapped too
  CHECK(v.back() == 9);
}

TEST_CASE("AdviseHugePages advises the whole huge pages inside its range and nothing outside it") {
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage")) return;  // refused: only speed is lost
  constexpr size_t kBytes = 5 * kHugePageMin;
  void* map = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(map != MAP_FAILED);
  auto* bytes = static_cast<uint8_t*>(map);
  uint8_t* first = bytes + (kHugePageMin - reinterpret_cast<uintptr_t>(bytes) % kHugePageMin);  // a boundary
  AdviseHugePages(first - 4096, kHugePageMin + 8192);  // one whole huge page and a bit each side
  CHECK_FALSE(AdvisedHuge(first - 4096));
  CHECK(AdvisedHuge(first));
  CHECK(AdvisedHuge(first + kHugePageMin - 1));
  CHECK_FALSE(AdvisedHuge(first + kHugePageMin));  // its range ends inside this page
  AdviseHugePages(first + 3 * kHugePageMin / 2, kHugePageMin);  // no whole page inside: nothing
  CHECK_FALSE(AdvisedHuge(first + kHugePageMin));
  CHECK_FALSE(AdvisedHuge(first + 2 * kHugePageMin));
  munmap(map, kBytes);
}

TEST_CASE("a BufferPool's new large buffer lies on pages advised for huge pages") {
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage")) return;
  BufferPool pool;
  std::string buf = pool.Take(4 * kHugePageMin);
  CHECK(AdvisedHuge(buf.data() + 2 * kHugePageMin));
}

TEST_CASE("a small HugeVector keeps its element alignment") {
  struct alignas(64) Block {
    uint64_t words[8];
  };
  HugeVector<Block> small(3);
  CHECK(reinterpret_cast<uintptr_t>(small.data()) % 64 == 0);
  CHECK(small.capacity() * sizeof(Block) < kHugePageMin);
}

TEST_CASE("a HugeVector keeps its contents while it grows past 2 MiB and shrinks below") {
  HugeVector<uint32_t> v;
  const uint32_t n = 3 * kHugePageMin / sizeof(uint32_t);
  for (uint32_t i = 0; i < n; ++i) v.push_back(i * 2654435761u);
  bool intact = true;
  for (uint32_t i = 0; i < n; ++i) intact = intact && v[i] == i * 2654435761u;
  CHECK(intact);
  v.resize(100);
  v.shrink_to_fit();
  CHECK(v.capacity() * sizeof(uint32_t) < kHugePageMin);
  intact = true;
  for (uint32_t i = 0; i < 100; ++i) intact = intact && v[i] == i * 2654435761u;
  CHECK(intact);
}

}  // namespace
}  // namespace strata
