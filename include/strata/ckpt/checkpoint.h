// Checkpoint writing, publishing and reading (layout: ckpt/format.h). No MPI here: the
// trainer sequences the ranks, this module owns the files.
//
// Writing a checkpoint of pass P from R ranks (names from format.h):
//   tmp = TmpName(CheckpointName(P))
//   every rank r:  WriteRankRows(dir + "/" + tmp, r, layout, store, 0, &info)
//                  (fsyncs its file before returning)
//   gather every rank's RankFileInfo to rank 0 (two u64s each), barrier
//   rank 0:        meta.rank_files = gathered infos; WriteMeta(dir + "/" + tmp, meta)
//                  PublishCheckpoint(dir, tmp, CheckpointName(P), keep)
// The checkpoint exists for readers once PublishCheckpoint has made LATEST name it; a crash
// at any point before leaves the previous checkpoint intact and selected.
//
// A delta export is the same sequence with min_last_pass > 0 (only rows changed since the
// previous export), meta.kind = Kind::kDelta, meta.base_pass = the pass of the previous
// export (or of the full checkpoint the chain starts from), and
// PublishCheckpoint(export_dir, TmpName(DeltaName(seq)), DeltaName(seq), 0).
//
// Resuming on R' ranks: ResolveCheckpoint, ReadMeta, CheckCompatible with the new flags,
// then every rank calls LoadOwnedRows and Puts the rows it is handed into its store.
//
// Every error is a Status naming the file and dataset (HDF5's own error printing is
// switched off on first use in each thread). Thread safety: functions may run concurrently
// on different files (the HDF5 build is thread-safe and serializes its calls).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "strata/ckpt/format.h"
#include "strata/common/row.h"
#include "strata/common/status.h"
#include "strata/model/model_spec.h"
#include "strata/store/row_store.h"

namespace strata::ckpt {

// Writes <ckpt_tmp_dir>/rows-<rank>.h5 (creating the directory) with every row of `store`
// whose last_pass >= min_last_pass (0: every row), in batches of whole chunks, then closes
// and fsyncs it. REQUIRES: store.row_bytes() == layout.bytes(); no concurrent Put on store.
// *info gets the row count and CRC32 that meta.h5 must record for this file.
Status WriteRankRows(const std::string& ckpt_tmp_dir, int rank, const RowLayout& layout,
                     RowStore& store, uint32_t min_last_pass, RankFileInfo* info);

// The rows a rank file is written from: scan visits each once (as RowStore::Scan does);
// rows is their number (with min_last_pass 0 the file is laid out for exactly that many,
// and a scan that visits another number fails), or with min_last_pass > 0 a bound on it
// (it sizes the file's chunks).
using RowVisitor = std::function<void(uint64_t key, const uint8_t* row)>;
struct RowSource {
  std::function<Status(const RowVisitor&)> scan;
  uint64_t rows = 0;
};
// The same from any source of rows (an increment's changed rows, read by key: min_last_pass
// 0, as the source chose them).
Status WriteRankRows(const std::string& ckpt_tmp_dir, int rank, const RowLayout& layout,
                     const RowSource& source, uint32_t min_last_pass, RankFileInfo* info);

// DRAM that writing or reading a rank file of `rows` rows holds beside the store: two
// batches of columns (one filled while the other is written or read) and, reading, a
// batch of rows; a batch is at most the file's rows.
uint64_t RankFileBufferBytes(const RowLayout& layout, uint64_t rows);

// Writes <ckpt_tmp_dir>/meta.h5 and fsyncs it and the directory; removes rows-<r>.h5 with
// r >= meta.ranks left there by an earlier crashed attempt. REQUIRES: every rank file is
// written; meta.rank_files.size() == meta.ranks; data_position.size() == workers.
Status WriteMeta(const std::string& ckpt_tmp_dir, const CheckpointMeta& meta);

// Renames <dir>/tmp_name to <dir>/final_name and fsyncs dir; then replaces <dir>/LATEST
// (LATEST.tmp, fsync, rename, fsync dir); then, LATEST being durable, removes leftover
// ".tmp-*" entries and all but the newest `keep` entries named like final_name (same
// prefix and a number; keep <= 0 keeps all; the newly published one is always kept), and
// the bases the kept increments build on (ResolveChain).
// A previous entry named final_name that is not yet selected is swapped out atomically.
Status PublishCheckpoint(const std::string& checkpoint_dir, const std::string& tmp_name,
                         const std::string& final_name, int keep);

// path_or_dir is a checkpoint (holds meta.h5) or a directory holding LATEST; *ckpt_path
// gets the checkpoint's path. NotFound naming what is missing otherwise.
Status ResolveCheckpoint(const std::string& path_or_dir, std::string* ckpt_path);

// Reads <ckpt_path>/meta.h5. Corruption on a bad checksum or an unknown format version.
Status ReadMeta(const std::string& ckpt_path, CheckpointMeta* meta);

// Refuses a resume whose model shape differs from the checkpoint's: InvalidArgument naming
// the flag, e.g. "--embedding-dim 16 in the checkpoint, 8 now". Learning rates, init and
// seed may change; only the shape and the optimizer kinds (which fix the state) must match.
// A delta export is refused too: it holds only the rows changed since its base (an
// increment is not: ResolveChain finds its bases).
Status CheckCompatible(const CheckpointMeta& meta, const ModelSpec& spec);

// Called with batches of rows: keys (n), rows (n, RowLayoutOf(model).bytes()) packed in the
// layout of common/row.h. The pointers are valid only during the call.
using RowSink = std::function<Status(const uint64_t* keys, size_t n, const uint8_t* rows)>;

// Hands `sink` every row of the checkpoint with OwnerRank(key, ranks) == rank, reading
// every rank file (or only rows-<rank>.h5 when ranks == meta.ranks). Checks row counts and
// CRC32s against meta; on an error, rows already handed over must be discarded.
// A sink error stops the load and is returned. REQUIRES: 0 <= rank < ranks.
Status LoadOwnedRows(const std::string& ckpt_path, const CheckpointMeta& meta, int rank,
                     int ranks, const RowSink& sink);

// Hands `sink` every row of rows-<file_rank>.h5 in file order, in batches of whole
// chunks, and checks its count and CRC32 against meta.rank_files[file_rank].
Status ScanRankFile(const std::string& ckpt_path, const CheckpointMeta& meta, int file_rank,
                    const RowSink& sink);

// One checkpoint of a chain, with its metadata.
struct ChainLink {
  std::string path;
  CheckpointMeta meta;
};

// The checkpoints a resume from ckpt_path loads, oldest first: ckpt_path alone when it is
// full, else its increments' bases (CheckpointName(base_pass) in the same directory) back
// to a full checkpoint, then ckpt_path. NotFound naming a missing base; Corruption when a
// base is not the pass its increment names.
Status ResolveChain(const std::string& ckpt_path, std::vector<ChainLink>* chain);

// With admission (ModelSpec::admit_min_count > 0), each rank also writes
// <ckpt_tmp_dir>/pending-<rank>.h5, its pending keys with their counts and the last pass
// that counted each, and fsyncs it.
Status WritePending(const std::string& ckpt_tmp_dir, int rank, const std::vector<uint64_t>& keys,
                    std::vector<uint8_t> counts, std::vector<uint32_t> last);

// The pending keys (with counts and last passes) with OwnerRank(key, ranks) == rank, from
// every rank's pending file (or only pending-<rank>.h5 when ranks == meta.ranks); none when
// the checkpoint was written without admission.
Status LoadOwnedPending(const std::string& ckpt_path, const CheckpointMeta& meta, int rank, int ranks,
                        std::vector<uint64_t>* keys, std::vector<uint8_t>* counts, std::vector<uint32_t>* last);

// With eviction (ModelSpec::evict_unseen_passes > 0), an increment or delta export also
// holds <ckpt_tmp_dir>/deleted-<rank>.h5: the keys of rank's rows erased since its base,
// which a load of it erases before it stores its rows (a key erased and seen again is in
// both). HasDeletedFiles says whether a checkpoint holds them.
Status WriteDeleted(const std::string& ckpt_tmp_dir, int rank, const std::vector<uint64_t>& keys);
bool HasDeletedFiles(const CheckpointMeta& meta);
// The deleted keys with OwnerRank(key, ranks) == rank (none when it holds no such files).
Status LoadOwnedDeleted(const std::string& ckpt_path, const CheckpointMeta& meta, int rank, int ranks,
                        std::vector<uint64_t>* keys);

}  // namespace strata::ckpt
