// Checkpoint format: what a checkpoint (or a delta export) is on disk, and the metadata
// struct that describes it. Every file is plain HDF5 (h5dump -H reads them); every byte of
// a dataset is checksummed, so a torn or flipped chunk is found when it is read: the rows
// of rows-<r>.h5 by the file's CRC32 in meta.h5, every other dataset by HDF5's Fletcher32
// filter on each chunk.
//
//   <checkpoint-dir>/
//     LATEST                 one line: the name of the selected checkpoint ("ckpt-00000012")
//     ckpt-00000012/         a published checkpoint (pass = 12 passes completed)
//       meta.h5              written last, by rank 0
//       rows-0.h5 ...        one per rank of the writing job: the rows that rank owned
//     .tmp-ckpt-00000014/    being written, or left by a crash: ignored, removed on publish
//
//   meta.h5
//     /                       attrs: format_version i32, kind str ("full" | "delta" |
//                                    "increment"),
//                                    flags str, pass i64, epoch i64, examples i64,
//                                    global_step i64, ranks i32, workers i32,
//                                    base_pass i64, min_last_pass u32 (deltas, else 0),
//                                    and, optional for readers (older files lack them):
//                                    train_input str (DescribeInput of the --train plan),
//                                    input_schema str (the input layout as a schema file,
//                                    data/schema.h), slot_names str (one per line),
//                                    batch_size i32 (examples per worker per step),
//                                    rows_evicted i64 (the eviction ledger's total)
//     /model                  group, attrs: num_slots, num_dense, embedding_dim i32,
//                                    mlp i32[L], sparse_optimizer str, dense_optimizer str,
//                                    lr_sparse, lr_dense, adagrad_init, init_scale f32,
//                                    ftrl_l1, ftrl_l2, ftrl_beta f32 (optional on read),
//                                    admit_min_count, evict_unseen_passes i32 (optional: 0),
//                                    row_dtype str ("fp32" | "bf16" | "fp16"; optional: fp32),
//                                    seed u64
//     /progress/data_position u64 (workers)      lines of its chunk each global worker
//                                                has consumed in the current epoch
//     /dense/params           f32 (P)            Mlp layout (model/mlp.h); the resume source
//     /dense/layers/<l>/weight f32 (in, out)     layer l of the MLP (0 = first hidden, the
//     /dense/layers/<l>/bias   f32 (out)         last = output), the same values as params,
//                                                 for tools (tools/python/strata_torch.py)
//     /dense/m, /dense/v      f32 (P), or (0) for SGD      attr on /dense: steps i64
//     /ranks/rows             u64 (ranks)        row count of each rows-<r>.h5
//     /ranks/crc32            u32 (ranks)        whole-content CRC of each rows-<r>.h5
//
//   rows-<r>.h5               attrs on /rows: rank i32, dim i32
//     /rows/keys              u64 (n)
//     /rows/embedding         f32 (n, dim), or u16 (n, dim) holding the bits of bf16 or
//                             fp16 values when /model row_dtype says so
//     /rows/state             f32 (n, S)         optimizer state, S = dim (adagrad, sgd), 1
//                                                (rowwise-adagrad), 2 dim (ftrl: z, n) or
//                                                2 dim + 1 (adam: m, v, steps) (common/row.h)
//     /rows/freq              u32 (n)
//     /rows/last_pass         u32 (n)
//   Row i of every dataset is one row; keys are distinct and all owned by rank r
//   (OwnerRank(key, ranks) == r). A full checkpoint's datasets are contiguous and start
//   at multiples of 4 KiB (their bytes are written straight to the file); an increment's
//   or a delta's are chunked, ChunkRows(dim) / 16 rows a chunk (1/16 MiB of embedding), or
//   the row count when smaller (files of earlier builds: chunks of ChunkRows(dim) rows).
//   Readers need not know.
//
//   pending-<r>.h5            with admission only (admit_min_count > 0): attr rank i32 on
//     /pending/keys           u64 (m)            /pending; keys counted, not yet admitted,
//     /pending/counts         u8 (m)             owned by r; examples that held each (>= 1);
//     /pending/last_pass      u32 (m)            the last pass that counted each
//   A delta export has no pending files.
//   deleted-<r>.h5            increments and deltas with eviction (evict_unseen_passes > 0):
//     /deleted/keys           u64 (m)            attr rank i32 on /deleted; the keys of rank
//                                                r's rows eviction erased since the base
//
// Checksums. The CRC32 in /ranks/crc32 is zlib's crc32 over the concatenated
// little-endian bytes of keys, embedding, state, freq, last_pass (in that order, all n
// rows): it covers every row byte of the rank file and binds the file to this meta.h5, so
// a damaged, missing, swapped, stale or short file is detected. Fletcher32 (HDF5) covers
// each chunk of every other dataset (meta.h5's, the pending and deleted files') and is
// checked by every read; rank files written before it was dropped from them have it too,
// and read the same. HDF5's own metadata (superblock, object headers) is
// checked by the library when it opens the file; a truncated file fails to open.
//
// An increment (--checkpoint-incremental) is a checkpoint of kind "increment" in the
// checkpoint directory: its rank files hold only the rows with last_pass >= min_last_pass
// (the rows trained since the previous checkpoint), base_pass = min_last_pass names that
// checkpoint (CheckpointName(base_pass), in the same directory; a full one or another
// increment), and the rest (dense state, progress, data position, pending files) is whole.
// A resume loads the chain from its full checkpoint up, each increment's rows replacing
// the rows before them; retention never removes a base a kept checkpoint needs.
//
// A delta export has the same layout (kind "delta") under <export-dir>/delta-000001/...:
// its rank files hold only rows with last_pass >= min_last_pass, its dense part is the
// whole dense state, and it applies on top of the model whose pass equals its base_pass
// (a full checkpoint, or the previous delta). Rows are never deleted, so a delta is a set
// of upserts. <export-dir>/LATEST names the newest delta.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/hbm/hbm_ps.h"
#include "strata/model/model_spec.h"

namespace strata::ckpt {

constexpr int kFormatVersion = 1;
// Rows per HDF5 chunk: big enough for sequential I/O, small enough that a flipped byte
// costs one chunk. 16 Ki rows at dim 16.
constexpr uint64_t kChunkBytes = 1 << 20;
inline uint64_t ChunkRows(int dim) {
  const uint64_t row = 4 * static_cast<uint64_t>(dim > 0 ? dim : 1);
  return kChunkBytes / row > 0 ? kChunkBytes / row : 1;
}

enum class Kind { kFull, kDelta, kIncrement };
// "full", "delta", "increment": the kind attribute of meta.h5.
const char* KindName(Kind kind);

// What meta.h5 records about one rank file.
struct RankFileInfo {
  uint64_t rows = 0;
  uint32_t crc32 = 0;
};

// How far training had come when a checkpoint was taken. A delta carries its own, which
// folding it onto a model adopts whole.
struct Progress {
  int64_t pass = 0;               // passes completed
  int64_t epoch = 0;
  int64_t examples = 0;           // examples trained so far, job-wide
  int64_t global_step = 0;
  int64_t rows_evicted = 0;       // rows --evict-unseen-passes removed so far, job-wide
};

struct CheckpointMeta {
  int format_version = kFormatVersion;
  Kind kind = Kind::kFull;
  std::string flags;              // the effective command line of the writing job
  std::string train_input;        // DescribeInput of its --train plan (empty from older builds)
  std::string input_schema;       // the input layout as schema text (empty from older builds)
  std::string slot_names;         // one per line, in slot order (empty from older builds)
  int batch_size = 0;             // examples per worker per step (0 from older builds)
  ModelSpec model;                // every field is stored; CheckCompatible says which must match
  Progress progress;
  int ranks = 1;                  // ranks of the writing job = number of rows-<r>.h5 files
  int workers = 1;                // W, global workers
  std::vector<uint64_t> data_position;  // (workers) lines consumed in the current epoch
  DenseState dense;
  std::vector<RankFileInfo> rank_files;  // (ranks), filled from WriteRankRows' results
  // Deltas only (0 for a full checkpoint).
  int64_t base_pass = 0;          // pass of the model this delta applies on top of
  uint32_t min_last_pass = 0;     // rows with last_pass >= this were exported
};

// "ckpt-00000012", "delta-000001", ".tmp-<final>", "rows-3.h5".
std::string CheckpointName(int64_t pass);
std::string DeltaName(int sequence);
std::string TmpName(const std::string& final_name);
std::string RankFileName(int rank);
std::string PendingFileName(int rank);  // "pending-3.h5"
std::string DeletedFileName(int rank);  // "deleted-3.h5"
inline constexpr const char* kMetaFileName = "meta.h5";
inline constexpr const char* kLatestFileName = "LATEST";

}  // namespace strata::ckpt
