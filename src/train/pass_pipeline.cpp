// PassPipeline: the Read, Pull and Stage-in stages and their threads.
#include "train/pass_pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <numeric>

#include "strata/common/partition.h"
#include "strata/common/row.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

PassData Failed(const Status& st) {
  PassData p;
  p.error = st;
  return p;
}

}  // namespace

PassPipeline::PassPipeline(const TrainOptions& options, const ShardPlan& plan, const PipelineHooks& hooks)
    : o_(options), plan_(plan), hooks_(hooks) {}

Status PassPipeline::Start(const TrainOptions& options, const ShardPlan& plan, Comm* world,
                           const PipelineHooks& hooks, const ReadPosition& from, bool threaded,
                           std::unique_ptr<PassPipeline>* out) {
  std::unique_ptr<PassPipeline> p(new PassPipeline(options, plan, hooks));
  p->world_ = world;
  p->threaded_ = threaded;
  p->next_pass_ = from.pass;
  p->epoch_ = from.epoch;
  Comm* pull_comm = world;
  if (threaded) {
    STRATA_RETURN_IF_ERROR(world->Duplicate(&p->read_comm_));
    STRATA_RETURN_IF_ERROR(world->Duplicate(&p->pull_comm_));
    STRATA_RETURN_IF_ERROR(world->Duplicate(&p->stage_comm_));
    pull_comm = p->pull_comm_.get();
  }
  const RowLayout layout{options.model.embedding_dim};
  p->exchange_ = std::make_unique<ParamExchange>(pull_comm, layout.bytes(), options.model.embedding_dim);
  STRATA_RETURN_IF_ERROR(world->AgreeOn(p->OpenReaders(from)));
  if (threaded) {
    if (hooks.announce) {
      p->read_exchange_ = std::make_unique<ParamExchange>(p->read_comm_.get(), layout.bytes(),
                                                          options.model.embedding_dim);
    }
    const size_t depth = static_cast<size_t>(std::max(1, options.prefetch_passes));
    p->read_slots_.release(static_cast<std::ptrdiff_t>(depth + 1));
    p->pull_slots_.release(static_cast<std::ptrdiff_t>(depth));
    p->read_q_ = std::make_unique<BoundedQueue<PassData>>(depth + 1);
    p->pull_q_ = std::make_unique<BoundedQueue<PassData>>(depth);
    p->ready_q_ = std::make_unique<BoundedQueue<PassData>>(depth);
    PassPipeline* self = p.get();
    p->threads_.emplace_back([self] { self->ReadLoop(); });
    p->threads_.emplace_back([self] { self->PullLoop(); });
    p->threads_.emplace_back([self] { self->StageLoop(); });
  }
  *out = std::move(p);
  return Status::OK();
}

PassPipeline::~PassPipeline() { Stop(); }

Status PassPipeline::OpenReaders(const ReadPosition& from) {
  readers_.clear();
  warned_.assign(static_cast<size_t>(o_.workers_per_rank), 0);
  const TsvSchema schema{o_.model.num_slots, o_.model.num_dense};
  const int first = world_->rank() * o_.workers_per_rank;
  for (int g = 0; g < o_.workers_per_rank; ++g) {
    readers_.push_back(std::make_unique<ChunkReader>(plan_, first + g, schema));
    if (!from.lines.empty() && from.lines[g] > 0) STRATA_RETURN_IF_ERROR(readers_.back()->SkipLines(from.lines[g]));
  }
  return Status::OK();
}

PassData PassPipeline::Next() {
  PassData p;
  if (threaded_) {
    if (!ready_q_->Pop(&p)) return Failed(Status::InvalidArgument("pipeline stopped"));
    read_slots_.release();
    pull_slots_.release();
    return p;
  }
  Read(world_, nullptr, &p);
  if (p.error.ok() && !p.last) Pull(world_, exchange_.get(), &p);
  if (p.error.ok() && !p.last) StageIn(&p);
  return p;
}

void PassPipeline::Stop() {
  if (!threaded_ || threads_.empty()) return;
  stop_ = true;
  read_slots_.release(1 << 10);  // wakes a Read or Pull waiting for a slot
  pull_slots_.release(1 << 10);
  ready_q_->Close();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

bool PassPipeline::AgreeStop(Comm* comm) {
  int64_t flag[1] = {stop_ ? 1 : 0};
  if (!comm->AllreduceMax(flag, 1).ok()) return true;
  return flag[0] != 0;
}

// Reads the next pass: up to steps-per-pass batches per local worker. An epoch whose
// chunks are all exhausted rolls over to the next; after the last epoch, last is set.
void PassPipeline::Read(Comm* comm, ParamExchange* announce_via, PassData* out) {
  const Clock::time_point start = Clock::now();
  const int64_t global_batch = static_cast<int64_t>(comm->size()) * o_.workers_per_rank * o_.batch_size;
  const int64_t steps_per_pass = std::max<int64_t>(1, (o_.pass_examples + global_batch - 1) / global_batch);
  for (;;) {
    if (done_ || epoch_ >= o_.epochs) {
      done_ = true;
      out->last = true;
      return;
    }
    Status local;
    out->batches.assign(readers_.size(), {});
    int64_t counts[2] = {0, 0};  // most batches of a worker, bad rows of the rank
    for (size_t g = 0; g < readers_.size() && local.ok(); ++g) {
      for (int64_t b = 0; b < steps_per_pass; ++b) {
        Batch batch;
        local = readers_[g]->Next(o_.batch_size, &batch);
        if (!local.ok() || batch.num_examples == 0) break;
        out->batches[g].push_back(std::move(batch));
      }
      counts[0] = std::max<int64_t>(counts[0], static_cast<int64_t>(out->batches[g].size()));
      counts[1] += static_cast<int64_t>(readers_[g]->bad_rows());
    }
    Status st = comm->AgreeOn(local);
    int64_t most[1] = {counts[0]}, bad[1] = {counts[1]};
    if (st.ok()) st = comm->AllreduceMax(most, 1);
    if (st.ok()) st = comm->AllreduceSum(bad, 1);
    if (st.ok()) st = ReportBadRows(comm, bad[0]);
    if (!st.ok()) {
      out->error = st;
      done_ = true;
      return;
    }
    if (most[0] > 0) {
      out->pass = next_pass_++;
      out->epoch = epoch_;
      out->steps = most[0];
      for (const auto& r : readers_) out->lines_after.push_back(r->lines_read());
      CollectKeys(out);
      if (announce_via) {
        const int id = out->pass;
        out->error = comm->AgreeOn(announce_via->Announce(
            out->keys, [&](const uint64_t* k, size_t n) { return hooks_.announce(id, k, n); }));
        if (!out->error.ok()) done_ = true;
      }
      out->read_s = Since(start);
      return;
    }
    ++epoch_;  // every chunk is exhausted: the next epoch starts from the beginning
    if (epoch_ < o_.epochs) {
      Status reopened = comm->AgreeOn(OpenReaders(ReadPosition{}));
      if (!reopened.ok()) {
        out->error = reopened;
        done_ = true;
        return;
      }
    }
  }
}

// The pass's working set: the distinct keys of its batches, sorted.
void PassPipeline::CollectKeys(PassData* pass) {
  for (const auto& worker : pass->batches) {
    for (const Batch& b : worker) pass->keys.insert(pass->keys.end(), b.keys.begin(), b.keys.end());
  }
  std::sort(pass->keys.begin(), pass->keys.end());
  pass->keys.erase(std::unique(pass->keys.begin(), pass->keys.end()), pass->keys.end());
}

// Warns about new malformed rows; past --max-bad-rows every rank fails with the same
// message, quoting the first bad row found on the lowest rank that has one.
Status PassPipeline::ReportBadRows(Comm* comm, int64_t total_bad) {
  std::string first;
  for (size_t g = 0; g < readers_.size(); ++g) {
    const auto& msgs = readers_[g]->bad_row_messages();
    for (size_t i = warned_[g]; i < msgs.size(); ++i) {
      fmt::print(stderr, "strata-train: warning: malformed row skipped: {}\n", msgs[i]);
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
  return Status::InvalidArgument(fmt::format("{} malformed rows exceed --max-bad-rows {} (first: {})",
                                             total_bad, o_.max_bad_rows, first));
}

void PassPipeline::Pull(Comm* comm, ParamExchange* exchange, PassData* pass) {
  const Clock::time_point start = Clock::now();
  pass->routing = std::make_shared<PassRouting>();
  const int id = pass->pass;
  RowServer serve = [&](const uint64_t* k, size_t n, uint8_t* r, uint8_t* f) { return hooks_.serve(id, k, n, r, f); };
  Status st = exchange->Pull(pass->keys, serve, &pass->rows, &pass->in_flight, pass->routing.get());
  pass->error = comm->AgreeOn(st);
  if (pass->error.ok() && hooks_.pulled) hooks_.pulled(*pass);
  pass->pull_s = Since(start);
}

// Orders the working set by device shard so each shard's inserts are contiguous. Rows move
// in place, one cycle of the permutation at a time, so the pass's rows are never held twice.
void PassPipeline::StageIn(PassData* pass) const {
  const Clock::time_point start = Clock::now();
  const int G = o_.workers_per_rank;
  const size_t n = pass->keys.size(), rb = RowLayout{o_.model.embedding_dim}.bytes();
  std::vector<uint32_t> order(n);  // order[i]: the row that goes to position i
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return DeviceShard(pass->keys[a], G) < DeviceShard(pass->keys[b], G);
  });
  std::vector<uint64_t> keys(n);
  std::vector<uint8_t> flags(n), returner(n);
  for (size_t i = 0; i < n; ++i) {
    keys[i] = pass->keys[order[i]];
    flags[i] = pass->in_flight[order[i]];
    returner[i] = pass->routing->returner[order[i]];
  }
  std::vector<uint8_t> held(rb);
  std::vector<bool> placed(n);
  for (size_t first = 0; first < n; ++first) {
    if (placed[first] || order[first] == first) continue;
    std::copy_n(&pass->rows[first * rb], rb, held.data());
    size_t at = first;
    for (size_t from = order[at]; from != first; at = from, from = order[at]) {
      std::copy_n(&pass->rows[from * rb], rb, &pass->rows[at * rb]);
      placed[at] = true;
    }
    std::copy_n(held.data(), rb, &pass->rows[at * rb]);
    placed[at] = true;
  }
  pass->keys.swap(keys);
  pass->in_flight.swap(flags);
  pass->routing->keys = pass->keys;
  pass->routing->returner.swap(returner);
  pass->stage_s = Since(start);
}

void PassPipeline::ReadLoop() {
  for (;;) {
    read_slots_.acquire();
    if (AgreeStop(read_comm_.get())) break;
    PassData p;
    Read(read_comm_.get(), read_exchange_.get(), &p);
    const bool end = p.last || !p.error.ok();
    read_q_->Push(std::move(p));
    if (end) break;
  }
  read_q_->Close();
}

void PassPipeline::PullLoop() {
  for (;;) {
    PassData p;
    const bool got = read_q_->Pop(&p);
    pull_slots_.acquire();
    if (AgreeStop(pull_comm_.get()) || !got) break;
    const bool end = p.last || !p.error.ok();
    if (!end) Pull(pull_comm_.get(), exchange_.get(), &p);
    pull_q_->Push(std::move(p));
    if (end) break;
  }
  read_q_->Close();
  pull_q_->Close();
}

void PassPipeline::StageLoop() {
  for (;;) {
    PassData p;
    const bool got = pull_q_->Pop(&p);
    if (AgreeStop(stage_comm_.get()) || !got) break;
    const bool end = p.last || !p.error.ok();
    if (!end) StageIn(&p);
    ready_q_->Push(std::move(p));
    if (end) break;
  }
  pull_q_->Close();
  ready_q_->Close();
}

}  // namespace strata
