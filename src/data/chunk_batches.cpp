// ChunkReader::NextBatches: a pass's rows gathered as lines on the calling thread, parsed in
// groups on a pool's threads, then cut into batches in order, so that the batches, the
// lines consumed and the bad rows are those of repeated Next calls.
#include <algorithm>

#include "data/criteo_row.h"
#include "data/schema_row.h"
#include "strata/data/chunk_reader.h"

namespace strata {

struct ChunkReader::LineBlock {
  std::string text;
  std::vector<size_t> begin;  // per line: its start in text; text up to the next start
  std::vector<uint64_t> line_no;
  std::vector<uint32_t> piece;
  size_t size() const { return begin.size(); }
  void Clear() {
    text.clear();
    begin.clear();
    line_no.clear();
    piece.clear();
  }
  std::string_view line(size_t i) const {
    const size_t end = i + 1 < begin.size() ? begin[i + 1] : text.size();
    return std::string_view(text).substr(begin[i], end - begin[i]);
  }
};

namespace {

constexpr int64_t kRoundRows = 65536;  // lines gathered, then parsed, at a time

// The rows of one group of a block's lines: the valid ones in `rows`, the others by index.
struct ParsedGroup {
  Batch rows;
  std::vector<std::pair<size_t, std::string>> bad;  // (line of the block, reason)
};

// Batches of `size` examples cut from the groups' rows in order; a group that is a whole
// batch by itself moves as it is.
void CutBatches(std::vector<ParsedGroup>* groups, int size, int slots, int dense, std::vector<Batch>* out) {
  Batch cur;
  cur.Clear(slots, dense);
  for (ParsedGroup& g : *groups) {
    if (cur.num_examples == 0 && g.rows.num_examples == size) {
      out->push_back(std::move(g.rows));
      continue;
    }
    for (int at = 0; at < g.rows.num_examples;) {
      const int take = std::min(size - cur.num_examples, g.rows.num_examples - at);
      AppendExamples(g.rows, at, take, &cur);
      at += take;
      if (cur.num_examples == size) {
        out->push_back(std::move(cur));
        cur.Clear(slots, dense);
      }
    }
  }
  if (cur.num_examples > 0) out->push_back(std::move(cur));
}

}  // namespace

Status ChunkReader::GatherLines(int64_t n, LineBlock* block, bool* ended) {
  *ended = false;
  while (static_cast<int64_t>(block->size()) < n) {
    std::string_view line;
    bool has_line = false;
    uint64_t line_no = 0;
    STRATA_RETURN_IF_ERROR(NextLine(&line, &has_line, &line_no));
    if (!has_line) {
      *ended = true;
      return Status::OK();
    }
    if (line.empty()) continue;
    if (schema_ && schema_->header && line_no == 1) {
      const Status st = data_internal::CheckHeader(line, *schema_);
      if (!st.ok()) return Status::InvalidArgument(FileOfPiece() + ":1: " + st.message());
      continue;
    }
    block->begin.push_back(block->text.size());
    block->text.append(line);
    block->line_no.push_back(line_no);
    block->piece.push_back(static_cast<uint32_t>(piece_));
  }
  return Status::OK();
}

Status ChunkReader::NextBatches(int max_examples, int max_batches, ThreadPool* pool, std::vector<Batch>* out) {
  out->clear();
  const int64_t want = static_cast<int64_t>(max_examples) * max_batches;
  std::vector<ParsedGroup> groups;
  int64_t have = 0;
  LineBlock block;  // one for every round: its memory is reused, not faulted in again
  for (bool ended = false; have < want && !ended;) {
    // Only as many lines as rows are missing (the lines read are those Next would read),
    // and at most kRoundRows at a time, so the raw text held beside the batches stays small.
    block.Clear();
    STRATA_RETURN_IF_ERROR(GatherLines(std::min(want - have, std::max<int64_t>(kRoundRows, max_examples)), &block, &ended));
    const size_t first = groups.size(), n = block.size(), per = static_cast<size_t>(max_examples);
    groups.resize(first + (n + per - 1) / per);
    const auto parse = [&](size_t g) {
      ParsedGroup& pg = groups[first + g];
      pg.rows.Clear(tsv_.num_slots, tsv_.num_dense);
      std::string reason;
      for (size_t i = g * per; i < std::min(n, (g + 1) * per); ++i) {
        if (!ParseRow(block.line(i), &pg.rows, &reason)) pg.bad.emplace_back(i, reason);
      }
    };
    ParallelFor(pool, groups.size() - first, parse);
    for (size_t g = first; g < groups.size(); ++g) {
      for (const auto& [i, reason] : groups[g].bad) {
        NoteBadRow(plan_.files()[pieces_[block.piece[i]].file].path, block.line_no[i], reason);
      }
      have += groups[g].rows.num_examples;
    }
  }
  CutBatches(&groups, max_examples, tsv_.num_slots, tsv_.num_dense, out);
  return Status::OK();
}

}  // namespace strata
