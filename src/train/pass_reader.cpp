// PassReader: batches, epochs and the malformed-row budget of the Read stage.
#include "train/pass_reader.h"

#include <fmt/format.h>

#include <algorithm>

#include "strata/common/fault_point.h"
#include "strata/common/stopwatch.h"
#include "train/distinct_keys.h"

namespace strata {

PassReader::PassReader(const TrainOptions& options, const ShardPlan& plan, int rank)
    : o_(options), plan_(plan), rank_(rank) {}

Status PassReader::Open(const ReadPosition& from) {
  next_pass_ = from.pass;
  epoch_ = from.epoch;
  readers_.clear();
  warned_.assign(static_cast<size_t>(o_.workers_per_rank), 0);
  const int first = rank_ * o_.workers_per_rank;
  for (int g = 0; g < o_.workers_per_rank; ++g) {
    readers_.push_back(std::make_unique<ChunkReader>(plan_, first + g, o_.input));
    if (!from.lines.empty() && from.lines[g] > 0) STRATA_RETURN_IF_ERROR(readers_.back()->SkipLines(from.lines[g]));
  }
  return Status::OK();
}

Status PassReader::ReadBatches(int64_t steps_per_pass, PassData* out, int64_t counts[2]) {
  out->batches.assign(readers_.size(), {});
  std::vector<Status> status(readers_.size());
  const int batches = static_cast<int>(std::min<int64_t>(steps_per_pass, INT32_MAX));
  // One worker parses its rows on the pool's threads; several share them out by worker.
  const bool by_worker = readers_.size() > 1 && pool_ != nullptr;
  const auto read_worker = [&](size_t g) {
    status[g] = readers_[g]->NextBatches(o_.batch_size, batches, by_worker ? nullptr : pool_.get(), &out->batches[g]);
  };
  ParallelFor(by_worker ? pool_.get() : nullptr, readers_.size(), read_worker);
  counts[0] = counts[1] = 0;
  for (size_t g = 0; g < readers_.size(); ++g) {
    STRATA_RETURN_IF_ERROR(status[g]);  // the first failing worker's error
    counts[0] = std::max<int64_t>(counts[0], static_cast<int64_t>(out->batches[g].size()));
    counts[1] += static_cast<int64_t>(readers_[g]->bad_rows());
  }
  return Status::OK();
}

void PassReader::Read(Comm* comm, PassData* out) {
  const Stopwatch watch;
  const int threads = std::min(kMaxReadThreads, ThreadsOfRank(o_, comm->local_size()));
  if (pool_ == nullptr && threads > 1) pool_ = std::make_unique<ThreadPool>(threads);
  const int64_t global_batch = static_cast<int64_t>(comm->size()) * o_.workers_per_rank * o_.batch_size;
  const int64_t steps_per_pass = std::max<int64_t>(1, (o_.pass_examples + global_batch - 1) / global_batch);
  while (!done_ && epoch_ < o_.epochs) {
    int64_t counts[2];
    Status st = ReadBatches(steps_per_pass, out, counts);
    if (st.ok()) st = InjectedFailure("read", comm->rank());
    st = comm->AgreeOn(st);
    int64_t most[1] = {counts[0]}, bad[1] = {counts[1]};
    if (st.ok()) st = comm->AllreduceMax(most, 1);
    if (st.ok()) st = comm->AllreduceSum(bad, 1);
    if (st.ok()) st = ReportBadRows(comm, bad[0]);
    if (st.ok() && most[0] > 0) {
      out->pass = next_pass_++;
      out->epoch = epoch_;
      out->steps = most[0];
      for (const auto& r : readers_) out->lines_after.push_back(r->lines_read());
      CollectKeys(out);
      out->read_s = watch.Seconds();
      return;
    }
    ++epoch_;  // every chunk is exhausted: the next epoch starts from the beginning
    if (st.ok() && epoch_ < o_.epochs) st = comm->AgreeOn(Open(ReadPosition{next_pass_, epoch_, {}}));
    if (!st.ok()) {
      out->error = st;
      done_ = true;
      return;
    }
  }
  done_ = true;
  out->last = true;
}

// The pass's working set: the distinct keys of its batches, sorted; with admission, the
// number of examples holding each (a key repeated in one example counts once). Without
// admission the batches' keys are bucketed where they lie.
void PassReader::CollectKeys(PassData* pass) const {
  if (o_.model.admit_min_count > 0) {
    for (const auto& worker : pass->batches) {
      for (const Batch& b : worker) AppendOncePerExample(b, &pass->keys);
    }
    SortDistinct(&pass->keys, &pass->key_examples, pool_.get());
    return;
  }
  std::vector<std::span<const uint64_t>> parts;
  for (const auto& worker : pass->batches) {
    for (const Batch& b : worker) parts.emplace_back(b.keys);
  }
  SortDistinct(parts, &pass->keys, nullptr, pool_.get());
}

// Keys of one slot are (slot, token) keys, so a key can repeat within an example only
// inside one multi-valued slot: only those are searched for repeats.
void PassReader::AppendOncePerExample(const Batch& b, std::vector<uint64_t>* out) {
  for (size_t g = 0; g + 1 < b.offsets.size(); ++g) {
    const uint32_t begin = b.offsets[g], end = b.offsets[g + 1];
    for (uint32_t k = begin; k < end; ++k) {
      if (std::find(b.keys.begin() + begin, b.keys.begin() + k, b.keys[k]) == b.keys.begin() + k) {
        out->push_back(b.keys[k]);
      }
    }
  }
}

// Warns about new malformed rows (not where every row must be scored, which allows none);
// past --max-bad-rows every rank fails with the same message, quoting the first bad row
// found on the lowest rank that has one.
Status PassReader::ReportBadRows(Comm* comm, int64_t total_bad) {
  std::string first;
  for (size_t g = 0; g < readers_.size(); ++g) {
    const auto& msgs = readers_[g]->bad_row_messages();
    for (size_t i = warned_[g]; i < msgs.size(); ++i) {
      if (!o_.score_every_row) fmt::print(stderr, "{}: warning: malformed row skipped: {}\n", o_.program, msgs[i]);
    }
    warned_[g] = msgs.size();
    if (first.empty() && !msgs.empty()) first = msgs.front();
  }
  if (total_bad <= o_.max_bad_rows) return Status::OK();
  std::vector<std::string> firsts;
  STRATA_RETURN_IF_ERROR(comm->AllGather(first, &firsts));
  for (const std::string& f : firsts) {
    if (!f.empty()) {
      first = f;
      break;
    }
  }
  if (o_.score_every_row) {
    return Status::InvalidArgument(fmt::format("malformed row: {} ({} in all; {} writes a probability for every "
                                               "input row)", first, total_bad, o_.program));
  }
  return Status::InvalidArgument(fmt::format("{} malformed rows exceed --max-bad-rows {} (first: {})",
                                             total_bad, o_.max_bad_rows, first));
}

}  // namespace strata
