// ChunkReader: reads one worker's chunk of a ShardPlan and cuts it into Batches, as an
// InputSchema says (strata/data/schema.h), or as Criteo TSV by its own fast path: label \t
// num_dense integers \t num_slots categorical tokens (hex), 1 + 13 + 26 = 40 columns for
// Criteo. Any feature field may be empty: an empty number is dense value 0
// (TransformDense(0)); an empty token gives its slot zero keys. The key of token t in slot
// s is SlotKey(s, CriteoTokenHash(t)). Malformed rows (wrong column count, a bad number, a
// label other than 0/1) are skipped and counted, and the first kMaxBadRowMessages are kept
// as "file:line: reason" (1-based line within its file). Blank lines are skipped silently;
// with a schema's header, the first line of each file must name its columns (else Next
// fails naming the file). Reads go through 4 MiB buffers (pread, or zlib for gzip); parsing
// allocates nothing per row; NextBatches parses a pass's rows on a pool's threads. Not
// thread-safe; one reader per worker thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "strata/common/status.h"
#include "strata/common/thread_pool.h"
#include "strata/data/batch.h"
#include "strata/data/schema.h"
#include "strata/data/shard_plan.h"

namespace strata {

struct TsvSchema {
  int num_slots = 26;  // categorical columns, after the integers
  int num_dense = 13;  // integer columns, after the label
  int columns() const { return 1 + num_dense + num_slots; }
};

// Token hash: a hex string of 1..16 digits is its value (so "68fd1e64" -> 0x68fd1e64);
// anything else is the 64-bit FNV-1a of its bytes. REQUIRES: !token.empty().
uint64_t CriteoTokenHash(std::string_view token);

namespace data_internal {
class LineReader;
}

class ChunkReader {
 public:
  static constexpr size_t kMaxBadRowMessages = 5;

  // REQUIRES: plan outlives the reader; 0 <= worker < plan.num_workers();
  // schema.num_slots in [1, 256) (the slot lives in the key's top byte).
  ChunkReader(const ShardPlan& plan, int worker, const TsvSchema& schema);
  // REQUIRES: as above, and schema.num_slots() >= 1.
  ChunkReader(const ShardPlan& plan, int worker, const InputSchema& schema);
  ~ChunkReader();
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;

  // Clears *out and appends up to max_examples parsed examples. OK with
  // out->num_examples == 0 means the chunk is exhausted. Errors: a file that cannot be
  // opened or read, corrupt gzip data, or a file shorter than when it was planned.
  // REQUIRES: max_examples >= 1.
  Status Next(int max_examples, Batch* out);

  // Up to max_batches batches of up to max_examples examples: exactly what as many calls of
  // Next would give (the same lines consumed, the same bad rows counted and quoted), with
  // the rows parsed on pool's threads (null: this thread). Fewer batches, the last maybe
  // short, at the end of the chunk. REQUIRES: max_examples >= 1; max_batches >= 1; pool
  // not running another ParallelFor.
  Status NextBatches(int max_examples, int max_batches, ThreadPool* pool, std::vector<Batch>* out);

  // Moves past the next n lines of the chunk without parsing them (resuming a run at a
  // recorded lines_read()). InvalidArgument when the chunk has fewer lines left.
  Status SkipLines(uint64_t n);

  uint64_t bad_rows() const { return bad_rows_; }
  const std::vector<std::string>& bad_row_messages() const { return bad_row_messages_; }
  uint64_t lines_read() const { return lines_read_; }  // of this chunk, blank and bad included
  uint64_t bytes_read() const { return bytes_read_; }  // uncompressed, '\n' included

 private:
  Status OpenPiece();
  Status NextLine(std::string_view* line, bool* has_line, uint64_t* line_no);
  // The next n rows' lines (blank lines skipped, header lines checked and skipped) copied
  // into *block; fewer, and *ended, at the end of the chunk.
  struct LineBlock;
  Status GatherLines(int64_t n, LineBlock* block, bool* ended);
  // Counts a bad row and keeps its message while there are fewer than kMaxBadRowMessages.
  void NoteBadRow(const std::string& file, uint64_t line_no, const std::string& reason);
  bool ParseRow(std::string_view line, Batch* out, std::string* reason) const;
  std::string FileOfPiece() const;
  char delimiter() const { return schema_ ? schema_->delimiter : '\t'; }

  const ShardPlan& plan_;
  const std::vector<ShardPiece>& pieces_;
  TsvSchema tsv_;                 // the batch shape; the Criteo layout when !schema_
  std::unique_ptr<const InputSchema> schema_;
  std::unique_ptr<data_internal::LineReader> lines_;
  size_t piece_ = 0;           // index of the current piece
  bool piece_open_ = false;
  uint64_t piece_done_ = 0;    // lines of the current piece consumed
  uint32_t stream_file_ = UINT32_MAX;  // the file lines_ reads (UINT32_MAX: none yet)
  uint64_t stream_line_ = 0;   // the file's line lines_ is at, once a piece of it is done
  uint64_t bad_rows_ = 0;
  std::vector<std::string> bad_row_messages_;
  uint64_t lines_read_ = 0;
  uint64_t bytes_read_ = 0;
};

// Rank 0 at start-up: every file of a schema with a header names the schema's columns, so
// a wrong schema fails before the first pass, naming the file; a Parquet file needs such a
// schema (its columns are named).
Status CheckHeaders(const ShardPlan& plan, const InputSchema& schema);

}  // namespace strata
