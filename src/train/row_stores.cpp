// OpenRowStores: memory store, or MEM-PS over a fresh SSD-PS.
#include "train/row_stores.h"

#include <filesystem>

#include "strata/common/row.h"
#include "strata/ssd/ssd_format.h"
#include "strata/ssd/ssd_store.h"

namespace strata {
namespace {

bool IsSsdStoreFileName(const std::string& name) {
  return name == ssd::kManifestName || name == ssd::kManifestTmpName || ssd::ParseSegmentFileName(name) != 0;
}

}  // namespace

Status OpenRowStores(const TrainOptions& o, int rank, size_t row_bytes, int threads, RowStores* out) {
  if (o.mem_cache_gb <= 0) {
    out->store = NewMemoryRowStore(row_bytes, threads);
    return Status::OK();
  }
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(o.ssd_dir) / ("rank-" + std::to_string(rank));
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    // Only a directory the SSD-PS wrote is emptied; anything else is the user's and kept.
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (!IsSsdStoreFileName(name)) {
        return Status::InvalidArgument("--ssd-dir: " + dir.string() + " holds " + name +
                                       ", which is not an SSD-PS file; choose an empty or SSD-PS directory");
      }
    }
    for (const auto& entry : fs::directory_iterator(dir, ec)) fs::remove(entry.path(), ec);
    if (ec) return Status::IOError("--ssd-dir: cannot empty " + dir.string() + ": " + ec.message());
  }
  SsdOptions so;
  so.dir = dir.string();
  so.row_bytes = row_bytes;
  so.compact_threshold = o.ssd_compact_threshold;
  so.direct_io = o.ssd_direct_io;
  so.segment_bytes = static_cast<uint64_t>(o.ssd_segment_mb * (1 << 20));
  so.threads = threads;
  // The checkpoint is the durable state; an fsync'ed manifest per pass would buy nothing.
  so.durable = false;
  std::unique_ptr<SsdStore> ssd;
  STRATA_RETURN_IF_ERROR(OpenSsdStore(so, &ssd));
  out->ssd = ssd.get();
  MemPsOptions mo;
  mo.capacity_bytes = static_cast<uint64_t>(o.mem_cache_gb * 1e9);
  mo.freq_offset = static_cast<int>(RowLayoutOf(o.model).counters_offset());
  mo.evict_in_calls = false;  // the trainer evicts before each pull, off the training thread
  mo.threads = threads;
  std::unique_ptr<MemPs> mem;
  STRATA_RETURN_IF_ERROR(NewMemPs(mo, std::move(ssd), &mem));
  out->mem = mem.get();
  out->store = std::move(mem);
  return Status::OK();
}

}  // namespace strata
