// PassPipeline: the Read, Pull and Stage-in stages and their threads.
#include "train/pass_pipeline.h"

#include <algorithm>
#include <utility>

#include "strata/common/fault_point.h"
#include "strata/common/stopwatch.h"
#include "strata/common/thread_name.h"

namespace strata {
namespace {

PassData Failed(const Status& st) {
  PassData p;
  p.error = st;
  return p;
}

bool AtStart(const ReadPosition& from) {
  return from.pass == 0 && from.epoch == 0 && std::all_of(from.lines.begin(), from.lines.end(), [](uint64_t n) { return n == 0; });
}

}  // namespace

PassPipeline::PassPipeline(const TrainOptions& options, Comm* world, ShardServer* server, HbmPs* hbm, bool threaded)
    : o_(options), world_(world), server_(server), hbm_(hbm), threaded_(threaded) {}

Status PassPipeline::OpenReader(const ShardPlan& plan, const ReadPosition& from) {
  reader_ = std::make_unique<PassReader>(o_, plan, world_->rank());
  return world_->AgreeOn(reader_->Open(from));
}

Status PassPipeline::StartTraining(const TrainOptions& options, const ShardPlan& plan, Comm* world,
                                   ShardServer* server, HbmPs* hbm, const ReadPosition& from, bool threaded,
                                   ReadAhead* ahead, std::unique_ptr<PassPipeline>* out) {
  std::unique_ptr<PassPipeline> p(new PassPipeline(options, world, server, hbm, threaded));
  if (ahead != nullptr && ahead->reader != nullptr && AtStart(from)) {  // the same on every rank
    p->reader_ = std::move(ahead->reader);
    p->read_ahead_.assign(std::make_move_iterator(ahead->passes.begin()), std::make_move_iterator(ahead->passes.end()));
    // Later passes make their room while they are pulled (StageLoop).
    if (hbm != nullptr && !p->read_ahead_.empty()) hbm->ReserveStage(p->read_ahead_.front().keys.size());
  } else {
    STRATA_RETURN_IF_ERROR(p->OpenReader(plan, from));
  }
  if (ahead != nullptr) *ahead = ReadAhead{};
  if (threaded) {
    STRATA_RETURN_IF_ERROR(p->StartThreads());
  } else {
    p->exchange_ = std::make_unique<ParamExchange>(world, server);
  }
  *out = std::move(p);
  return Status::OK();
}

Status PassPipeline::StartEvaluation(const TrainOptions& options, const ShardPlan& plan, Comm* world,
                                     ShardServer* server, std::unique_ptr<PassPipeline>* out) {
  TrainOptions one_epoch = options;
  one_epoch.epochs = 1;
  std::unique_ptr<PassPipeline> p(new PassPipeline(one_epoch, world, server, nullptr, false));
  STRATA_RETURN_IF_ERROR(p->OpenReader(plan, ReadPosition{}));
  p->exchange_ = std::make_unique<ParamExchange>(world, server);
  *out = std::move(p);
  return Status::OK();
}

Status PassPipeline::StartThreads() {
  STRATA_RETURN_IF_ERROR(world_->Duplicate(&read_comm_));
  STRATA_RETURN_IF_ERROR(world_->Duplicate(&pull_comm_));
  STRATA_RETURN_IF_ERROR(world_->Duplicate(&stage_comm_));
  exchange_ = std::make_unique<ParamExchange>(pull_comm_.get(), server_);
  if (server_->caches()) read_exchange_ = std::make_unique<ParamExchange>(read_comm_.get(), server_);
  const size_t depth = static_cast<size_t>(std::max(1, o_.prefetch_passes));
  read_slots_.release(static_cast<std::ptrdiff_t>(depth + 1));
  pull_slots_.release(static_cast<std::ptrdiff_t>(depth));
  read_q_ = std::make_unique<BoundedQueue<PassData>>(depth + 1);
  pull_q_ = std::make_unique<BoundedQueue<PassData>>(depth);
  ready_q_ = std::make_unique<BoundedQueue<PassData>>(depth);
  room_q_ = std::make_unique<BoundedQueue<size_t>>(depth + 1);
  threads_.emplace_back([this] {
    NameThisThread("strata-read");
    ReadLoop();
  });
  threads_.emplace_back([this] {
    NameThisThread("strata-pull");
    PullLoop();
  });
  threads_.emplace_back([this] {
    NameThisThread("strata-stage");
    StageLoop();
  });
  return Status::OK();
}

PassPipeline::~PassPipeline() { Stop(); }

PassPipeline::Wire PassPipeline::WireBytes() const {
  Wire w;
  for (const auto* comm : {read_comm_.get(), pull_comm_.get(), stage_comm_.get()}) w.sent += comm ? comm->bytes_sent() : 0;
  for (const auto* exchange : {exchange_.get(), read_exchange_.get()}) w.lower_bound += exchange ? exchange->lower_bound_bytes() : 0;
  return w;
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
  if (p.error.ok() && !p.last && hbm_) exchange_->Recycle(StageIn(world_, &p));
  return p;
}

Status PassPipeline::SwapIn() {
  const Status st = hbm_->SwapIn();
  standby_free_.release();
  return st;
}

void PassPipeline::Stop() {
  if (!threaded_ || threads_.empty()) return;
  stop_ = true;
  read_slots_.release(1 << 10);  // wakes a Read, Pull or Stage-in waiting for a slot
  pull_slots_.release(1 << 10);
  standby_free_.release(1 << 10);
  ready_q_->Close();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

bool PassPipeline::AgreeStop(Comm* comm) {
  int64_t flag[1] = {stop_ ? 1 : 0};
  if (!comm->AllreduceMax(flag, 1).ok()) return true;
  return flag[0] != 0;
}

// announce_via: the exchange that announces the pass's keys, or null for none.
void PassPipeline::Read(Comm* comm, ParamExchange* announce_via, PassData* out) {
  const Stopwatch watch;
  if (read_ahead_.empty()) {
    reader_->Read(comm, out);
  } else {  // read before the pipeline started: no read time here
    *out = std::move(read_ahead_.front());
    read_ahead_.pop_front();
    out->read_s = 0;
  }
  if (!out->error.ok() || out->last || !announce_via) return;
  out->error = comm->AgreeOn(announce_via->Announce(out->pass, out->keys));
  out->read_s = watch.Seconds();
}

void PassPipeline::Pull(Comm* comm, ParamExchange* exchange, PassData* pass) {
  const Stopwatch watch;
  Status st = hbm_ ? exchange->Pull(pass->pass, std::move(pass->keys), std::move(pass->key_examples), &pass->rows,
                                  &pass->held, &pass->routing)
                  : exchange->PullReadOnly(&pass->keys, &pass->rows);
  if (st.ok()) st = InjectedFailure("pull", comm->rank());
  pass->error = comm->AgreeOn(st);
  pass->pull_s = watch.Seconds();
}

// The pass's rows go into the standby tables, which the Train stage's SwapIn hands back.
PulledRows PassPipeline::StageIn(Comm* comm, PassData* pass) {
  const Stopwatch watch;
  if (!threaded_) standby_free_.acquire();  // released by the previous pass's SwapIn
  const std::vector<uint64_t>& keys = pass->routing.keys();
  Status st = hbm_->BeginStage(pass->pass, keys.size());
  pass->rows.ForEachPart(keys, [&](const uint64_t* part_keys, size_t n, const uint8_t* rows) {
    if (st.ok()) st = hbm_->Stage(part_keys, n, rows);
  });
  PulledRows spent = std::move(pass->rows);
  pass->rows.Clear();  // a moved-from value, made empty
  if (st.ok()) st = InjectedFailure("stage", comm->rank());
  pass->error = comm->AgreeOn(st);
  pass->stage_s = watch.Seconds();
  return spent;
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
    if (!end) {
      room_q_->Push(p.keys.size());
      Pull(pull_comm_.get(), exchange_.get(), &p);
    }
    pull_q_->Push(std::move(p));
    if (end) break;
  }
  read_q_->Close();
  room_q_->Close();
  pull_q_->Close();
}

// Takes the standby tables as soon as Pull starts a pass and makes their room meanwhile
// (HbmPs::ReserveStage), and before the stop agreement, so that once every rank agreed to
// go on, none waits on anything local before Stage-in's own agreement.
void PassPipeline::StageLoop() {
  for (;;) {
    size_t room = 0;
    const bool owned = room_q_->Pop(&room);
    if (owned) {
      standby_free_.acquire();
      hbm_->ReserveStage(room);
    }
    PassData p;
    const bool got = pull_q_->Pop(&p);
    const bool end = !got || p.last || !p.error.ok();
    if (!end && !owned) standby_free_.acquire();
    if (AgreeStop(stage_comm_.get()) || !got) break;
    PulledRows spent;
    if (!end) spent = StageIn(stage_comm_.get(), &p);
    ready_q_->Push(std::move(p));
    exchange_->Recycle(std::move(spent));  // after the hand-over: it may free an older buffer (milliseconds)
    if (end) break;
  }
  room_q_->Close();
  pull_q_->Close();
  ready_q_->Close();
}

}  // namespace strata
