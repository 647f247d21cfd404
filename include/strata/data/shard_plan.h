// ShardPlan: the deterministic split of a job's input into one chunk per worker.
// The input is the logical concatenation of all files' lines (N lines in all), cut into
// stripes of S lines (S = --batch-size, the examples a worker reads a step); stripe k goes to
// worker k mod W. So every line is read exactly once across the job, and a step's W batches
// are W consecutive stripes: the job reads its input in the file's order, as one reader
// would, and a time-ordered log trains from its oldest rows to its newest whatever W is
// (blank and malformed lines aside). Stripes of ceil(N / W) lines (kContiguousChunks) give
// each worker one contiguous part instead (evaluation; --worker-input parts). Chunks differ
// by at most one stripe. Whole files dealt out in turn (PlanWholeFiles; --worker-input
// files) give file k to worker k mod W, so that each file is read, and a gzip or Parquet file
// decompressed, by one worker; chunks then differ as the files do. The split depends only
// on the files, W and S, never on how W workers are spread over ranks and devices. Rank 0
// plans (it scans every file once), serializes the plan and broadcasts it, so all ranks
// read the same boundaries; the plan holds a piece a stripe (36 bytes on the wire: 36 MB
// for a billion lines in stripes of 1024). A ShardPlan is an immutable value once built; const methods are safe from any
// thread.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "strata/common/status.h"

namespace strata {

// How a file's lines are stored, told by its first bytes, never by its name.
enum class FileEncoding : uint8_t {
  kPlain = 0,
  kGzip = 1,     // one or more gzip members (1f 8b)
  kParquet = 2,  // Apache Parquet ("PAR1"): each row read as a line of text (parquet_stream.h)
};

struct InputFile {
  std::string path;
  FileEncoding encoding = FileEncoding::kPlain;
  // '\n'-terminated lines, plus a last unterminated one if any. Parquet: 1 (its header,
  // the column names) + rows.
  uint64_t lines = 0;
  uint64_t bytes = 0;  // content bytes (uncompressed size for gzip, file size for Parquet)

  bool operator==(const InputFile&) const = default;
};

// One contiguous run of lines of one file that belongs to one worker: a stripe, the part of
// a stripe in one file, or (W = 1) adjacent stripes of one file joined.
struct ShardPiece {
  uint32_t file = 0;        // index into ShardPlan::files()
  uint64_t first_line = 0;  // 0-based line index within the file
  uint64_t num_lines = 0;   // >= 1
  // Plain files: [begin_byte, end_byte) holds exactly these lines (aligned to line starts).
  // Gzip and Parquet files: both 0; the reader starts at line 0 and skips first_line lines
  // (Parquet: it decodes only the row groups from the one holding first_line on), and goes
  // on in the same stream to the worker's next piece of the file: each worker decompresses
  // or decodes all of a gzip or Parquet file and parses only its own stripes.
  uint64_t begin_byte = 0;
  uint64_t end_byte = 0;

  bool operator==(const ShardPiece&) const = default;
};

class ShardPlan {
 public:
  const std::vector<InputFile>& files() const { return files_; }
  int num_workers() const { return static_cast<int>(chunks_.size()); }
  // The lines of a stripe; 0 for whole files dealt out in turn (whole_files()).
  uint64_t stripe_lines() const { return stripe_lines_; }
  bool whole_files() const { return stripe_lines_ == 0; }
  // REQUIRES: 0 <= worker < num_workers(). Pieces in file order; empty when N < W.
  const std::vector<ShardPiece>& chunk(int worker) const { return chunks_[worker]; }
  uint64_t chunk_lines(int worker) const;
  uint64_t total_lines() const { return total_lines_; }

  // Byte string for MPI_Bcast; Deserialize(Serialize()) gives an equal plan.
  //   "SSPL" magic | u32 version=3 | u64 stripe_lines (0: whole files) | u32 num_files | per file: u32
  //   path_len, path bytes, u8 encoding, u64 lines, u64 bytes | u32 num_workers | per worker:
  //   u32 num_pieces, per piece: u32 file, u64 first_line, u64 num_lines, u64 begin_byte,
  //   u64 end_byte
  // (little-endian, no padding). Deserialize checks sizes, indices and line totals and
  // returns Corruption on any mismatch.
  std::string Serialize() const;
  static Status Deserialize(const std::string& bytes, ShardPlan* out);

  bool operator==(const ShardPlan&) const = default;

 private:
  friend Status PlanShards(const std::vector<std::string>&, int, uint64_t, ShardPlan*);
  friend Status PlanWholeFiles(const std::vector<std::string>&, int, ShardPlan*);

  std::vector<InputFile> files_;
  uint64_t stripe_lines_ = 1;  // 0: whole files
  std::vector<std::vector<ShardPiece>> chunks_;
  uint64_t total_lines_ = 0;
};

// PlanShards' stripe_lines for one contiguous chunk a worker: stripes of ceil(N / W) lines.
inline constexpr uint64_t kContiguousChunks = 0;

// Scans every file once (a memchr newline count that notes where each stripe starts in a
// plain file; gzip files are decompressed; Parquet files give their row count from their
// footer) and splits their N lines into num_workers chunks of stripes of stripe_lines as
// described above; kContiguousChunks counts the lines first (a plain file is scanned again
// for its stripe starts). Blank lines count as lines (the reader skips them). Errors: no
// files, num_workers < 1, an unreadable or corrupt file, or N == 0 ("no examples in
// <files>").
Status PlanShards(const std::vector<std::string>& files, int num_workers, uint64_t stripe_lines, ShardPlan* out);

// The same scan, the files dealt out whole instead: file k to worker k mod W (a worker may
// get none). The same errors.
Status PlanWholeFiles(const std::vector<std::string>& files, int num_workers, ShardPlan* out);

// The error of a read of the plan's files that found lines but not one example: every
// line blank, or a malformed row skipped under --max-bad-rows. Names the files.
Status NoExamplesIn(const ShardPlan& plan);

// What a plan reads, as one short line for checkpoints: "3 files, 60000 lines in stripes of
// 4096, id <hex>" (the stripes, or "in whole files dealt out in turn", named where there
// are several workers, since only then do they decide which lines a worker's data position
// counts). The id hashes each file's name without its directory (a staged copy elsewhere
// matches), its line count and its size, in order: a changed, added or reordered file
// changes it.
std::string DescribeInput(const ShardPlan& plan);

}  // namespace strata
