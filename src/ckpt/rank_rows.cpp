// rows-<r>.h5: writing a rank's rows from its RowStore, scanning them back in batches with
// count and CRC checks, and loading the rows a rank owns under a new rank count.
#include <zlib.h>

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "ckpt/file_sync.h"
#include "ckpt/h5_util.h"
#include "strata/ckpt/checkpoint.h"
#include "strata/common/partition.h"

namespace strata::ckpt {
namespace {

// The five datasets of a rank file, in CRC order.
enum Column { kKeys, kEmbedding, kState, kFreq, kLastPass, kColumns };
constexpr const char* kColumnNames[kColumns] = {"keys", "embedding", "state", "freq", "last_pass"};

// One batch of rows split into the datasets' column buffers, plus per-column CRCs.
struct Columns {
  explicit Columns(int dim) : dim(dim) {}
  int dim;
  std::vector<uint64_t> keys;
  std::vector<float> emb, state;
  std::vector<uint32_t> freq, last;
  uint32_t crc[kColumns] = {};
  uint64_t bytes[kColumns] = {};

  size_t size() const { return keys.size(); }
  void Resize(size_t n) {
    keys.resize(n);
    emb.resize(n * dim);
    state.resize(n * dim);
    freq.resize(n);
    last.resize(n);
  }
  void* data(int c) {
    void* p[kColumns] = {keys.data(), emb.data(), state.data(), freq.data(), last.data()};
    return p[c];
  }
  size_t col_bytes(int c) const {
    return keys.size() * (c == kKeys ? 8 : c == kEmbedding || c == kState ? 4 * dim : 4);
  }
  void UpdateCrcs() {
    for (int c = 0; c < kColumns; ++c) {
      crc[c] = crc32_z(crc[c], static_cast<const Bytef*>(data(c)), col_bytes(c));
      bytes[c] += col_bytes(c);
    }
  }
  // CRC32 of the concatenation of all five columns' bytes (format.h).
  uint32_t FileCrc() const {
    uLong all = crc[0];
    for (int c = 1; c < kColumns; ++c) all = crc32_combine64(all, crc[c], static_cast<z_off64_t>(bytes[c]));
    return static_cast<uint32_t>(all);
  }
};

hid_t ColumnType(int c) {
  return c == kKeys ? H5T_NATIVE_UINT64 : c == kEmbedding || c == kState ? H5T_NATIVE_FLOAT : H5T_NATIVE_UINT32;
}
uint64_t ColumnCols(int c, int dim) { return c == kEmbedding || c == kState ? dim : 0; }

uint64_t BatchRows(int dim) { return 4 * ChunkRows(dim); }

Status WriteBatch(h5::Dataset* ds, Columns* cols) {
  for (int c = 0; c < kColumns; ++c) STRATA_RETURN_IF_ERROR(ds[c].Append(cols->data(c), cols->size()));
  cols->UpdateCrcs();
  cols->Resize(0);
  return Status::OK();
}

}  // namespace

Status WriteRankRows(const std::string& ckpt_tmp_dir, int rank, const RowLayout& layout,
                     RowStore& store, uint32_t min_last_pass, RankFileInfo* info) {
  assert(store.row_bytes() == layout.bytes());
  std::error_code ec;
  std::filesystem::create_directories(ckpt_tmp_dir, ec);
  if (ec) return Status::IOError("cannot create " + ckpt_tmp_dir + ": " + ec.message());
  const std::string path = ckpt_tmp_dir + "/" + RankFileName(rank);
  h5::Handle file, group;
  STRATA_RETURN_IF_ERROR(h5::CreateFile(path, &file));
  STRATA_RETURN_IF_ERROR(h5::CreateGroup(file.get(), "rows", path, &group));
  STRATA_RETURN_IF_ERROR(h5::WriteAttr(group.get(), "rank", H5T_NATIVE_INT, &rank, path + ": /rows"));
  STRATA_RETURN_IF_ERROR(h5::WriteAttr(group.get(), "dim", H5T_NATIVE_INT, &layout.dim, path + ": /rows"));
  // Small stores get one small chunk: HDF5 allocates whole chunks.
  const uint64_t chunk_rows = std::clamp<uint64_t>(store.num_keys(), 1, ChunkRows(layout.dim));
  h5::Dataset ds[kColumns];
  for (int c = 0; c < kColumns; ++c) {
    STRATA_RETURN_IF_ERROR(h5::Dataset::Create(group.get(), kColumnNames[c], ColumnType(c), ColumnCols(c, layout.dim),
                                               chunk_rows, path + ": /rows/" + kColumnNames[c], &ds[c]));
  }
  const size_t batch = BatchRows(layout.dim), d = layout.dim;
  Columns cols(layout.dim);
  Status st;
  STRATA_RETURN_IF_ERROR(store.Scan([&](uint64_t key, const uint8_t* row) {
    if (!st.ok() || layout.LastPass(row) < min_last_pass) return;
    const size_t i = cols.size();
    cols.Resize(i + 1);
    cols.keys[i] = key;
    std::memcpy(&cols.emb[i * d], RowLayout::Embedding(row), d * sizeof(float));
    std::memcpy(&cols.state[i * d], layout.State(row), d * sizeof(float));
    cols.freq[i] = layout.Freq(row);
    cols.last[i] = layout.LastPass(row);
    if (cols.size() == batch) st = WriteBatch(ds, &cols);
  }));
  STRATA_RETURN_IF_ERROR(st);
  STRATA_RETURN_IF_ERROR(WriteBatch(ds, &cols));
  info->rows = ds[kKeys].rows();
  info->crc32 = cols.FileCrc();
  for (h5::Dataset& one : ds) one = h5::Dataset();
  STRATA_RETURN_IF_ERROR(group.Close(path));
  STRATA_RETURN_IF_ERROR(file.Close(path));
  return SyncPath(path);
}

Status ScanRankFile(const std::string& ckpt_path, const CheckpointMeta& meta, int file_rank,
                    const RowSink& sink) {
  assert(file_rank >= 0 && file_rank < meta.ranks);
  const int dim = meta.model.embedding_dim;
  const RowLayout layout{dim};
  const std::string path = ckpt_path + "/" + RankFileName(file_rank);
  const RankFileInfo& expect = meta.rank_files[file_rank];
  h5::Handle file, group;
  STRATA_RETURN_IF_ERROR(h5::OpenFileReadOnly(path, &file));
  STRATA_RETURN_IF_ERROR(h5::OpenGroup(file.get(), "rows", path, &group));
  int stored_rank = -1;
  STRATA_RETURN_IF_ERROR(h5::ReadAttr(group.get(), "rank", H5T_NATIVE_INT, &stored_rank, path + ": /rows"));
  if (stored_rank != file_rank) {
    return Status::Corruption(path + ": written by rank " + std::to_string(stored_rank) + ", expected " +
                              std::to_string(file_rank));
  }
  h5::Dataset ds[kColumns];
  for (int c = 0; c < kColumns; ++c) {
    STRATA_RETURN_IF_ERROR(h5::Dataset::Open(group.get(), kColumnNames[c], ColumnType(c), ColumnCols(c, dim),
                                             path + ": /rows/" + kColumnNames[c], &ds[c]));
    if (ds[c].rows() != expect.rows) {
      return Status::Corruption(ds[c].where() + ": " + std::to_string(ds[c].rows()) + " rows, " +
                                kMetaFileName + " says " + std::to_string(expect.rows));
    }
  }
  const uint64_t batch = BatchRows(dim);
  Columns cols(dim);
  std::vector<uint8_t> rows;
  for (uint64_t first = 0; first < expect.rows; first += batch) {
    const uint64_t n = std::min(batch, expect.rows - first);
    cols.Resize(n);
    for (int c = 0; c < kColumns; ++c) STRATA_RETURN_IF_ERROR(ds[c].Read(first, n, cols.data(c)));
    cols.UpdateCrcs();
    rows.resize(n * layout.bytes());
    for (uint64_t i = 0; i < n; ++i) {
      if (OwnerRank(cols.keys[i], meta.ranks) != file_rank) {
        return Status::Corruption(path + ": row " + std::to_string(first + i) + " key " +
                                  std::to_string(cols.keys[i]) + " is not owned by rank " + std::to_string(file_rank));
      }
      uint8_t* row = &rows[i * layout.bytes()];
      std::memcpy(RowLayout::Embedding(row), &cols.emb[i * dim], dim * sizeof(float));
      std::memcpy(layout.State(row), &cols.state[i * dim], dim * sizeof(float));
      layout.SetFreq(row, cols.freq[i]);
      layout.SetLastPass(row, cols.last[i]);
    }
    STRATA_RETURN_IF_ERROR(sink(cols.keys.data(), n, rows.data()));
  }
  if (cols.FileCrc() != expect.crc32) {
    char msg[128];
    std::snprintf(msg, sizeof msg, ": CRC32 %08x, %s says %08x (a file of another checkpoint or rank?)",
                  cols.FileCrc(), kMetaFileName, expect.crc32);
    return Status::Corruption(path + msg);
  }
  return Status::OK();
}

Status LoadOwnedRows(const std::string& ckpt_path, const CheckpointMeta& meta, int rank,
                     int ranks, const RowSink& sink) {
  assert(rank >= 0 && rank < ranks);
  if (ranks == meta.ranks) return ScanRankFile(ckpt_path, meta, rank, sink);
  const size_t row_bytes = RowLayout{meta.model.embedding_dim}.bytes();
  std::vector<uint64_t> keys;
  std::vector<uint8_t> rows;
  for (int f = 0; f < meta.ranks; ++f) {
    STRATA_RETURN_IF_ERROR(ScanRankFile(ckpt_path, meta, f, [&](const uint64_t* k, size_t n, const uint8_t* r) {
      keys.clear();
      rows.clear();
      for (size_t i = 0; i < n; ++i) {
        if (OwnerRank(k[i], ranks) != rank) continue;
        keys.push_back(k[i]);
        rows.insert(rows.end(), r + i * row_bytes, r + (i + 1) * row_bytes);
      }
      return keys.empty() ? Status::OK() : sink(keys.data(), keys.size(), rows.data());
    }));
  }
  return Status::OK();
}

}  // namespace strata::ckpt
