// rows-<r>.h5: writing a rank's rows from its RowStore, scanning them back in batches with
// count and CRC checks, and loading the rows a rank owns under a new rank count. Writing
// and scanning each run one helper thread for the file side (HDF5's copies, or the direct
// writes and reads of a full checkpoint's contiguous datasets) so it overlaps the row
// encoding and the CRC on the calling thread; the calling thread joins it before
// returning, on every path. The file's CRC32 in meta.h5 covers every byte of its rows, so
// its datasets go without HDF5's per-chunk Fletcher32 (which took more CPU than the rest
// of a write): a damaged row is found by the CRC once its file has been read.
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <future>

#include "ckpt/extent_io.h"
#include "ckpt/file_sync.h"
#include "ckpt/h5_util.h"
#include "strata/ckpt/checkpoint.h"
#include "strata/common/huge_pages.h"
#include "strata/common/partition.h"
#include "strata/common/thread_pool.h"

namespace strata::ckpt {
namespace {

// The five datasets of a rank file, in CRC order.
enum Column { kKeys, kEmbedding, kState, kFreq, kLastPass, kColumns };
constexpr const char* kColumnNames[kColumns] = {"keys", "embedding", "state", "freq", "last_pass"};

// Bytes a row takes in column c.
size_t ColumnRowBytes(int c, size_t emb_bytes, size_t state_floats) {
  return c == kKeys ? 8 : c == kEmbedding ? emb_bytes : c == kState ? 4 * state_floats : 4;
}
size_t ColumnRowBytes(int c, const RowLayout& layout) {
  return ColumnRowBytes(c, layout.embedding_bytes(), layout.state_floats);
}

// One batch of at most `capacity` rows split into the datasets' column buffers.
struct Columns {
  Columns(const RowLayout& layout, size_t capacity)
      : emb_bytes(layout.embedding_bytes()),
        state_floats(layout.state_floats),
        keys(capacity),
        emb(capacity * emb_bytes),
        state(capacity * state_floats),
        freq(capacity),
        last(capacity) {}
  size_t emb_bytes;  // a row's embedding, in the row dtype
  size_t state_floats;
  size_t n = 0;
  // Page-aligned where large (HugeVector), so a full batch's columns can go out O_DIRECT.
  HugeVector<uint64_t> keys;
  HugeVector<uint8_t> emb;
  HugeVector<float> state;
  HugeVector<uint32_t> freq, last;

  void* data(int c) {
    void* p[kColumns] = {keys.data(), emb.data(), state.data(), freq.data(), last.data()};
    return p[c];
  }
  size_t col_bytes(int c) const { return n * ColumnRowBytes(c, emb_bytes, state_floats); }
};

// The CRC32 of a rank file (format.h): per-column CRCs fed batch by batch in file order,
// combined as if the five columns were concatenated.
class FileCrc {
 public:
  void Add(Columns& cols) {
    for (int c = 0; c < kColumns; ++c) {
      crc_[c] = crc32_z(crc_[c], static_cast<const Bytef*>(cols.data(c)), cols.col_bytes(c));
      bytes_[c] += cols.col_bytes(c);
    }
  }
  uint32_t Value() const {
    uLong all = crc_[0];
    for (int c = 1; c < kColumns; ++c) all = crc32_combine64(all, crc_[c], static_cast<z_off64_t>(bytes_[c]));
    return static_cast<uint32_t>(all);
  }

 private:
  uLong crc_[kColumns] = {};
  uint64_t bytes_[kColumns] = {};
};

// 16-bit embeddings are stored as their raw bits (u16); /model row_dtype says which.
hid_t ColumnType(int c, const RowLayout& layout) {
  if (c == kEmbedding && layout.dtype != RowDtype::kFp32) return H5T_NATIVE_UINT16;
  return c == kKeys ? H5T_NATIVE_UINT64 : c == kEmbedding || c == kState ? H5T_NATIVE_FLOAT : H5T_NATIVE_UINT32;
}
uint64_t ColumnCols(int c, const RowLayout& layout) {
  return c == kEmbedding ? layout.dim : c == kState ? layout.state_floats : 0;
}

// fn(c) for every column at once, each on a thread of pool (kColumns threads); the first
// error in column order. A batch's columns lie far apart in the file, and a thread waits
// for its transfer: with one transfer in flight, the small columns' (a quarter MB at dim
// 16) went at under 1 GB/s and the whole read of a checkpoint at 1.6 GB/s of a disk's 4.
Status ForEachColumnAtOnce(ThreadPool* pool, const std::function<Status(int)>& fn) {
  std::vector<Status> st(kColumns);
  pool->ParallelFor(kColumns, [&](size_t c) { st[c] = fn(static_cast<int>(c)); });
  return FirstError(st);
}

// Rows a batch (written or read) holds: about 16 chunks, a multiple of 1024 rows so that
// every column of a full batch is a multiple of 4 KiB (O_DIRECT's unit). 16 MiB of
// embeddings a batch wrote the 2 GB model of ckpt_bench at 1.67-1.85 GB/s against
// 1.45-1.54 with 4 MiB, and read it at 2.66-3.03 against 2.08-2.91 (alternating runs); a
// batch's two buffers take about 75 MB at dim 16 with Adagrad (RankFileBufferBytes), a
// small file's its rows' share.
uint64_t BatchRows(int dim) { return std::max<uint64_t>(1024, 16 * ChunkRows(dim) / 1024 * 1024); }
// The rows a batch buffer holds for a file of `rows` rows: a batch, or fewer for a small file.
uint64_t BufferRows(int dim, uint64_t rows) { return std::min(BatchRows(dim), std::max<uint64_t>(1, rows)); }

// Starts writeback of what is dirty in the file so far (no wait), so the disk writes while
// the next batches are encoded and the closing fsync has little left to do.
void StartWriteback(int fd) {
  if (fd >= 0) ::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
}

// Small stores get one small chunk: HDF5 allocates whole chunks. A delta (min_last_pass >
// 0) holds an unknown share of the store, often a small one: its chunks are 16x smaller,
// so its last, partial chunk wastes little.
uint64_t FileChunkRows(uint64_t store_rows, const RowLayout& layout, uint32_t min_last_pass) {
  const uint64_t most = min_last_pass > 0 ? std::max<uint64_t>(1, ChunkRows(layout.dim) / 16) : ChunkRows(layout.dim);
  return std::clamp<uint64_t>(store_rows, 1, most);
}

Status AppendBatch(h5::Dataset* ds, Columns* cols, int writeback_fd) {
  h5::SilenceErrors();
  for (int c = 0; c < kColumns; ++c) STRATA_RETURN_IF_ERROR(ds[c].Append(cols->data(c), cols->n));
  StartWriteback(writeback_fd);
  return Status::OK();
}

}  // namespace

namespace {

// A batch sink: writes one batch of columns to the file (on the helper thread).
using BatchSink = std::function<Status(Columns*)>;

// Two threads share the work: this one scans the source into one column batch and CRCs it
// while a helper hands the previous batch to `sink`. *rows: the rows scanned.
Status ScanToColumns(const RowLayout& layout, const RowSource& source, uint32_t min_last_pass, const BatchSink& sink,
                     FileCrc* crc, uint64_t* rows) {
  const size_t batch = BufferRows(layout.dim, source.rows);
  const size_t eb = layout.embedding_bytes(), s = layout.state_floats;
  Columns bufs[2] = {Columns(layout, batch), Columns(layout, batch)};
  int cur = 0;
  Status st;
  *rows = 0;
  std::future<Status> writing;  // of bufs[cur ^ 1]; declared last, so joined first
  auto hand_off = [&] {
    crc->Add(bufs[cur]);
    *rows += bufs[cur].n;
    if (writing.valid()) st = writing.get();
    if (!st.ok()) return;
    writing = std::async(std::launch::async, sink, &bufs[cur]);
    cur ^= 1;
    bufs[cur].n = 0;
  };
  Status scan = source.scan([&](uint64_t key, const uint8_t* row) {
    if (!st.ok() || layout.LastPass(row) < min_last_pass) return;
    Columns& cols = bufs[cur];
    const size_t i = cols.n++;
    cols.keys[i] = key;
    std::memcpy(&cols.emb[i * eb], row, eb);
    std::memcpy(&cols.state[i * s], layout.State(row), s * sizeof(float));
    cols.freq[i] = layout.Freq(row);
    cols.last[i] = layout.LastPass(row);
    if (cols.n == batch) hand_off();
  });
  if (scan.ok() && st.ok() && bufs[cur].n > 0) hand_off();
  if (writing.valid()) {
    const Status last = writing.get();
    if (st.ok()) st = last;
  }
  STRATA_RETURN_IF_ERROR(scan);
  return st;
}

// A rank file with its /rows group and attributes.
Status CreateRankFile(const std::string& path, int rank, const RowLayout& layout, uint64_t align, h5::Handle* file,
                      h5::Handle* group) {
  STRATA_RETURN_IF_ERROR(h5::CreateFile(path, file, align));
  STRATA_RETURN_IF_ERROR(h5::CreateGroup(file->get(), "rows", path, group));
  STRATA_RETURN_IF_ERROR(h5::WriteAttr(group->get(), "rank", H5T_NATIVE_INT, &rank, path + ": /rows"));
  return h5::WriteAttr(group->get(), "dim", H5T_NATIVE_INT, &layout.dim, path + ": /rows");
}

// A delta (or an empty file): an unknown share of the store, appended to chunked datasets.
Status WriteChunked(const std::string& path, int rank, const RowLayout& layout, const RowSource& source,
                    uint32_t min_last_pass, RankFileInfo* info) {
  h5::Handle file, group;
  STRATA_RETURN_IF_ERROR(CreateRankFile(path, rank, layout, 0, &file, &group));
  const uint64_t chunk_rows = FileChunkRows(source.rows, layout, min_last_pass);
  h5::Dataset ds[kColumns];
  for (int c = 0; c < kColumns; ++c) {
    STRATA_RETURN_IF_ERROR(h5::Dataset::Create(group.get(), kColumnNames[c], ColumnType(c, layout), ColumnCols(c, layout),
                                               chunk_rows, h5::ChunkCheck::kNone, path + ": /rows/" + kColumnNames[c],
                                               &ds[c]));
  }
  const int writeback_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);  // a hint only: -1 is fine
  FileCrc crc;
  uint64_t rows = 0;
  const Status st = ScanToColumns(layout, source, min_last_pass,
                                  [&ds, writeback_fd](Columns* cols) { return AppendBatch(ds, cols, writeback_fd); },
                                  &crc, &rows);
  if (writeback_fd >= 0) ::close(writeback_fd);
  STRATA_RETURN_IF_ERROR(st);
  info->rows = ds[kKeys].rows();
  info->crc32 = crc.Value();
  for (h5::Dataset& one : ds) one = h5::Dataset();
  STRATA_RETURN_IF_ERROR(group.Close(path));
  STRATA_RETURN_IF_ERROR(file.Close(path));
  return SyncPath(path);
}

// A full checkpoint or an increment: source.rows rows exactly, so the datasets are laid
// out contiguous and 4 KiB-aligned by HDF5 first, and their bytes then written straight to
// those extents (ExtentFile) without HDF5's copies or the page cache.
Status WriteDirect(const std::string& path, int rank, const RowLayout& layout, const RowSource& source,
                   RankFileInfo* info) {
  std::vector<ExtentFile::Extent> extents(kColumns);
  {
    h5::Handle file, group;
    STRATA_RETURN_IF_ERROR(CreateRankFile(path, rank, layout, ExtentFile::kAlign, &file, &group));
    for (int c = 0; c < kColumns; ++c) {
      h5::Dataset ds;
      STRATA_RETURN_IF_ERROR(h5::Dataset::CreateFixed(group.get(), kColumnNames[c], ColumnType(c, layout),
                                                      ColumnCols(c, layout), source.rows,
                                                      path + ": /rows/" + kColumnNames[c], &ds));
      STRATA_RETURN_IF_ERROR(ds.FileOffset(&extents[c].offset));
      extents[c].bytes = source.rows * ColumnRowBytes(c, layout);
    }
    STRATA_RETURN_IF_ERROR(group.Close(path));
    STRATA_RETURN_IF_ERROR(file.Close(path));
  }
  std::unique_ptr<ExtentFile> writer;
  STRATA_RETURN_IF_ERROR(ExtentFile::Create(path, extents, &writer));
  const BatchSink sink = [&writer](Columns* cols) {
    for (int c = 0; c < kColumns; ++c) STRATA_RETURN_IF_ERROR(writer->Append(c, cols->data(c), cols->col_bytes(c)));
    return Status::OK();
  };
  FileCrc crc;
  uint64_t rows = 0;
  STRATA_RETURN_IF_ERROR(ScanToColumns(layout, source, 0, sink, &crc, &rows));
  if (rows != source.rows) {
    return Status::IOError(path + ": the store gave " + std::to_string(rows) + " rows, not the " +
                           std::to_string(source.rows) + " it counted before the checkpoint");
  }
  STRATA_RETURN_IF_ERROR(writer->Finish());
  info->rows = rows;
  info->crc32 = crc.Value();
  return SyncPath(path);
}

}  // namespace

Status WriteRankRows(const std::string& ckpt_tmp_dir, int rank, const RowLayout& layout,
                     RowStore& store, uint32_t min_last_pass, RankFileInfo* info) {
  assert(store.row_bytes() == layout.bytes());
  const RowSource all{[&store](const RowVisitor& visit) { return store.Scan(visit); }, store.num_keys()};
  return WriteRankRows(ckpt_tmp_dir, rank, layout, all, min_last_pass, info);
}

Status WriteRankRows(const std::string& ckpt_tmp_dir, int rank, const RowLayout& layout,
                     const RowSource& source, uint32_t min_last_pass, RankFileInfo* info) {
  std::error_code ec;
  std::filesystem::create_directories(ckpt_tmp_dir, ec);
  if (ec) return Status::IOError("cannot create " + ckpt_tmp_dir + ": " + ec.message());
  const std::string path = ckpt_tmp_dir + "/" + RankFileName(rank);
  if (min_last_pass == 0 && source.rows > 0) return WriteDirect(path, rank, layout, source, info);
  return WriteChunked(path, rank, layout, source, min_last_pass, info);
}

namespace {

// Opens rank file_rank's file of the checkpoint and its column datasets, checking the
// rank it names and that every column has the rows the metadata says.
Status OpenRankColumns(const std::string& path, const CheckpointMeta& meta, int file_rank, h5::Handle* file,
                       h5::Dataset (&ds)[kColumns]) {
  const RankFileInfo& expect = meta.rank_files[file_rank];
  h5::Handle group;
  STRATA_RETURN_IF_ERROR(h5::OpenFileReadOnly(path, file));
  STRATA_RETURN_IF_ERROR(h5::OpenGroup(file->get(), "rows", path, &group));
  int stored_rank = -1;
  STRATA_RETURN_IF_ERROR(h5::ReadAttr(group.get(), "rank", H5T_NATIVE_INT, &stored_rank, path + ": /rows"));
  if (stored_rank != file_rank) {
    return Status::Corruption(path + ": written by rank " + std::to_string(stored_rank) + ", expected " +
                              std::to_string(file_rank));
  }
  for (int c = 0; c < kColumns; ++c) {
    STRATA_RETURN_IF_ERROR(h5::Dataset::Open(group.get(), kColumnNames[c], ColumnType(c, RowLayoutOf(meta.model)),
                                             ColumnCols(c, RowLayoutOf(meta.model)),
                                             path + ": /rows/" + kColumnNames[c], &ds[c]));
    if (ds[c].rows() != expect.rows) {
      return Status::Corruption(ds[c].where() + ": " + std::to_string(ds[c].rows()) + " rows, " +
                                kMetaFileName + " says " + std::to_string(expect.rows));
    }
  }
  return Status::OK();
}

// A full checkpoint's or an increment's columns are contiguous datasets holding the
// memory's bytes (ExtentFile wrote them so, at 4 KiB-aligned offsets): a batch is read
// straight from their extents (ExtentReader), without HDF5's copies or, for its aligned
// ranges, the page cache. The five ranges of a batch lie far apart, so those that do go
// through the page cache are announced to its readahead first. Any other file (a delta's
// chunks, another writer's types or user block) is read through HDF5: usable() is false.
class RawColumns {
 public:
  RawColumns(const std::string& path, hid_t file, const h5::Dataset (&ds)[kColumns], const RowLayout& layout) {
    h5::Handle fcpl(H5Fget_create_plist(file), H5Pclose);
    hsize_t user_block = 1;
    if (!fcpl.valid() || H5Pget_userblock(fcpl.get(), &user_block) < 0 || user_block != 0) return;
    for (int c = 0; c < kColumns; ++c) {
      if (ds[c].rows() == 0 || !ds[c].FileOffset(&start_[c]).ok() || !ds[c].StoresMemoryBytes()) return;
      row_bytes_[c] = ColumnRowBytes(c, layout);
    }
    if (!ExtentReader::Open(path, &reader_).ok()) {
      reader_.reset();  // HDF5 reads it, or says why not
      return;
    }
    readers_ = std::make_unique<ThreadPool>(kColumns);
  }
  bool usable() const { return reader_ != nullptr; }
  // Rows [first, first + cols->n) of every column, the columns' reads in flight side by
  // side. REQUIRES: usable(); one call at a time.
  Status Read(uint64_t first, Columns* cols) const {
    for (int c = 0; c < kColumns; ++c) reader_->WillNeed(start_[c] + first * row_bytes_[c], cols->n * row_bytes_[c]);
    return ForEachColumnAtOnce(readers_.get(), [&](int c) {
      return reader_->Read(start_[c] + first * row_bytes_[c], cols->n * row_bytes_[c], cols->data(c));
    });
  }

 private:
  std::unique_ptr<ThreadPool> readers_;  // a thread a column (ForEachColumnAtOnce)
  std::unique_ptr<ExtentReader> reader_;
  uint64_t start_[kColumns] = {};
  uint64_t row_bytes_[kColumns] = {};
};

// Rows (cols.n, row bytes) from a batch of columns, each key checked to be file_rank's.
Status ColumnsToRows(const Columns& cols, const RowLayout& layout, int ranks, int file_rank, uint64_t first,
                     const std::string& path, std::vector<uint8_t>* rows) {
  const size_t eb = cols.emb_bytes, s = cols.state_floats;
  rows->resize(cols.n * layout.bytes());
  for (uint64_t i = 0; i < cols.n; ++i) {
    if (OwnerRank(cols.keys[i], ranks) != file_rank) {
      return Status::Corruption(path + ": row " + std::to_string(first + i) + " key " +
                                std::to_string(cols.keys[i]) + " is not owned by rank " + std::to_string(file_rank));
    }
    uint8_t* row = &(*rows)[i * layout.bytes()];
    std::memcpy(row, &cols.emb[i * eb], eb);
    std::memcpy(layout.State(row), &cols.state[i * s], s * sizeof(float));
    layout.SetFreq(row, cols.freq[i]);
    layout.SetLastPass(row, cols.last[i]);
  }
  return Status::OK();
}

}  // namespace

// Two threads share the work: a helper reads the next batch from the datasets (a full
// checkpoint's extents directly, any other file through HDF5's reads and copies and the
// Fletcher32 checks of files written with them) while this one CRCs, checks and hands over
// the current one. The sink has every row of the file before its CRC is checked: a damaged
// file fails the scan at its end, and the caller with it (a resume stops before training,
// a tool exits 1).
Status ScanRankFile(const std::string& ckpt_path, const CheckpointMeta& meta, int file_rank,
                    const RowSink& sink) {
  assert(file_rank >= 0 && file_rank < meta.ranks);
  const RowLayout layout = RowLayoutOf(meta.model);
  const std::string path = ckpt_path + "/" + RankFileName(file_rank);
  const RankFileInfo& expect = meta.rank_files[file_rank];
  h5::Handle file;
  h5::Dataset ds[kColumns];
  STRATA_RETURN_IF_ERROR(OpenRankColumns(path, meta, file_rank, &file, ds));
  const uint64_t batch = BufferRows(layout.dim, expect.rows);
  Columns bufs[2] = {Columns(layout, batch), Columns(layout, batch)};
  const RawColumns raw(path, file.get(), ds, layout);
  auto read_batch = [&ds, &expect, &raw, batch](uint64_t first, Columns* cols) {
    h5::SilenceErrors();
    cols->n = std::min(batch, expect.rows - first);
    if (raw.usable()) return raw.Read(first, cols);
    for (int c = 0; c < kColumns; ++c) STRATA_RETURN_IF_ERROR(ds[c].Read(first, cols->n, cols->data(c)));
    return Status::OK();
  };
  FileCrc crc;
  std::vector<uint8_t> rows;
  std::future<Status> reading;  // into bufs[cur]; declared last, so joined first
  if (expect.rows > 0) reading = std::async(std::launch::async, read_batch, 0, &bufs[0]);
  for (uint64_t first = 0, cur = 0; first < expect.rows; first += batch, cur ^= 1) {
    STRATA_RETURN_IF_ERROR(reading.get());
    if (first + batch < expect.rows) reading = std::async(std::launch::async, read_batch, first + batch, &bufs[cur ^ 1]);
    crc.Add(bufs[cur]);
    STRATA_RETURN_IF_ERROR(ColumnsToRows(bufs[cur], layout, meta.ranks, file_rank, first, path, &rows));
    STRATA_RETURN_IF_ERROR(sink(bufs[cur].keys.data(), bufs[cur].n, rows.data()));
  }
  if (crc.Value() != expect.crc32) {
    char msg[128];
    std::snprintf(msg, sizeof msg, ": CRC32 %08x, %s says %08x (damaged, or a file of another checkpoint or rank)",
                  crc.Value(), kMetaFileName, expect.crc32);
    return Status::Corruption(path + msg);
  }
  return Status::OK();
}

uint64_t RankFileBufferBytes(const RowLayout& layout, uint64_t rows) {
  uint64_t column_bytes = 0;  // a row's, over the columns
  for (int c = 0; c < kColumns; ++c) column_bytes += ColumnRowBytes(c, layout);
  return BufferRows(layout.dim, rows) * (2 * column_bytes + layout.bytes());
}

Status LoadOwnedRows(const std::string& ckpt_path, const CheckpointMeta& meta, int rank,
                     int ranks, const RowSink& sink) {
  assert(rank >= 0 && rank < ranks);
  if (ranks == meta.ranks) return ScanRankFile(ckpt_path, meta, rank, sink);
  const size_t row_bytes = RowLayoutOf(meta.model).bytes();
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
