// RunTraining: the job of one rank, as an orchestration of the training layer's units:
// SetUpJob (backend, shard server, plans), the PassPipeline (Read, Pull, Stage-in on their
// threads), and per pass on this thread: PassRefresh (rows an earlier pass held), SwapIn,
// StepLoop (the global steps), the push-back through the exchange, PassReporter (metrics),
// Evaluator and the Checkpointer's schedule.
#include "strata/train/trainer.h"

#include <fmt/format.h>

#include <cmath>

#include "strata/comm/param_exchange.h"
#include "strata/common/fault_point.h"
#include "strata/common/process_memory.h"
#include "strata/common/stopwatch.h"
#include "train/checkpointer.h"
#include "train/evaluator.h"
#include "train/job_setup.h"
#include "train/pass_pipeline.h"
#include "train/pass_refresh.h"
#include "train/pass_report.h"
#include "train/pass_stats.h"
#include "train/row_export.h"
#include "train/step_loop.h"
#include "train/stop_signal.h"

namespace strata {
namespace {

class Job {
 public:
  Job(const TrainOptions& o, Comm* comm) : o_(o), comm_(comm), checkpointer_(o, comm) {}

  Status Run() {
    STRATA_RETURN_IF_ERROR(PlanJobInput(o_, comm_, &parts_));
    STRATA_RETURN_IF_ERROR(PlanJobMemory(o_, comm_, &parts_));
    if (o_.dry_run) return Status::OK();
    STRATA_RETURN_IF_ERROR(SetUpJob(o_, comm_, &parts_));
    STRATA_RETURN_IF_ERROR(ConnectStepCollectives(o_, comm_, &parts_));
    exchange_ = std::make_unique<ParamExchange>(comm_, parts_.server.get());
    if (ByteAllToAll* nccl = parts_.hbm->step_transport()) exchange_->SetStepTransport(nccl);
    steps_ = std::make_unique<StepLoop>(comm_, exchange_.get(), parts_.hbm.get(), parts_.pool.get(), parts_.workers,
                                        o_.batch_size, o_.model.num_slots, o_.model.num_dense, o_.model.schedule);
    evaluator_ = std::make_unique<Evaluator>(o_, parts_.eval_plan, comm_, parts_.server.get(), parts_.hbm.get(),
                                             parts_.pool.get());
    reporter_ = std::make_unique<PassReporter>(comm_, parts_.server.get(), o_.model.evict_unseen_passes > 0);
    checkpointer_.Attach(parts_.server.get());
    STRATA_RETURN_IF_ERROR(comm_->AgreeOn(reporter_->Open(o_.metrics_out)));
    checkpointer_.SetTrainInput(DescribeInput(parts_.train_plan));
    bool resume = false;
    STRATA_RETURN_IF_ERROR(checkpointer_.ResumeWanted(&resume));
    if (resume || !o_.init_from.empty()) parts_.read_ahead = ReadAhead{};  // freed before the model loads
    if (resume) {
      STRATA_RETURN_IF_ERROR(Resume());
    } else if (!o_.init_from.empty()) {
      STRATA_RETURN_IF_ERROR(InitFrom());
    }
    std::unique_ptr<PassPipeline> pipeline;
    STRATA_RETURN_IF_ERROR(PassPipeline::StartTraining(o_, parts_.train_plan, comm_, parts_.server.get(),
                                                       parts_.hbm.get(), Position(), o_.pipeline,
                                                       &parts_.read_ahead, &pipeline));
    Status st = TrainAll(pipeline.get());
    pipeline->Stop();
    const PassPipeline::Wire stages = pipeline->WireBytes();
    train_wire_ = {comm_->bytes_sent() + stages.sent,
                   exchange_->lower_bound_bytes() + steps_->dense_lower_bound_bytes() + stages.lower_bound};
    pipeline.reset();     // frees what the stages held
    ReturnFreedMemory();  // so the final checkpoint and evaluation reuse it (14 MB off the
                          // peak RSS of the Criteo-sized larger-than-memory bench)
    STRATA_RETURN_IF_ERROR(st);
    // The same count on every rank. A resumed job may have had nothing left to read.
    if (!resumed_ && progress_.examples == resumed_examples_) return NoExamplesIn(parts_.train_plan);
    if (checkpointer_.FinalDue(progress_.passes)) STRATA_RETURN_IF_ERROR(WriteCheckpoint());
    PassStats final_eval;
    if (parts_.has_eval) STRATA_RETURN_IF_ERROR(Evaluate(&final_eval));
    return Finish(final_eval);
  }

 private:
  Status Resume() {
    STRATA_RETURN_IF_ERROR(checkpointer_.Resume(parts_.server.get(), parts_.hbm.get(), &progress_));
    resumed_examples_ = progress_.examples;
    resumed_ = true;
    if (comm_->rank() == 0) {
      fmt::print("{}: resumed after pass {} ({} examples)\n", o_.program, progress_.passes, progress_.examples);
    }
    return Status::OK();
  }

  Status InitFrom() {
    STRATA_RETURN_IF_ERROR(checkpointer_.InitFrom(parts_.server.get(), parts_.hbm.get(), &progress_));
    resumed_examples_ = progress_.examples;
    if (comm_->rank() == 0) {
      fmt::print("{}: starting from the model of {} (after pass {}) on new input\n", o_.program, o_.init_from,
                 progress_.passes);
    }
    return Status::OK();
  }

  ReadPosition Position() const { return ReadPosition{progress_.passes, progress_.epoch, progress_.local_lines}; }

  Status TrainAll(PassPipeline* pipeline) {
    for (;;) {
      const Stopwatch pass_watch;
      PassData pass = pipeline->Next();
      STRATA_RETURN_IF_ERROR(pass.error);
      if (pass.last) return Status::OK();
      PassStats st;
      STRATA_RETURN_IF_ERROR(TrainPass(pipeline, &pass, &st));
      st.wall_s = pass_watch.Seconds();
      train_s_ += st.wall_s;
      Advance(pass, st);
      if (parts_.has_eval && o_.eval_every_passes > 0 && progress_.passes % o_.eval_every_passes == 0) {
        STRATA_RETURN_IF_ERROR(Evaluate(&st));
      }
      STRATA_RETURN_IF_ERROR(reporter_->Report(&st));
      progress_.rows_evicted += st.rows_evicted;
      if (checkpointer_.PeriodicDue(progress_.passes)) STRATA_RETURN_IF_ERROR(WriteCheckpoint());
      STRATA_RETURN_IF_ERROR(HoldForStop(comm_, progress_.passes));
      STRATA_RETURN_IF_ERROR(StopIfAsked());
    }
  }

  // At a pass boundary: when any rank got a stop signal, every rank writes the checkpoint
  // of the passes so far and the job stops (Status::Stopped).
  Status StopIfAsked() {
    int64_t sig[1] = {StopSignal()};
    STRATA_RETURN_IF_ERROR(comm_->AllreduceMax(sig, 1));
    if (sig[0] == 0) return Status::OK();
    if (checkpointer_.FinalDue(progress_.passes)) STRATA_RETURN_IF_ERROR(WriteCheckpoint());
    return Status::Stopped(fmt::format(
        "stopped by SIG{} after pass {}; {}", sigabbrev_np(static_cast<int>(sig[0])), progress_.passes - 1,
        o_.checkpoint_dir.empty() ? std::string("no --checkpoint-dir, so nothing was kept")
                                  : "its checkpoint is in " + o_.checkpoint_dir + ": run again with --resume=auto"));
  }

  // Refresh and swap in the staged pass, run its steps, push its rows home.
  Status TrainPass(PassPipeline* pipeline, PassData* pass, PassStats* st) {
    st->Begin(*pass);
    const uint64_t mpi_before = comm_->bytes_sent();
    Stopwatch watch;
    STRATA_RETURN_IF_ERROR(refresh_.Apply(pass, parts_.hbm.get(), exchange_.get(), comm_));
    STRATA_RETURN_IF_ERROR(comm_->AgreeOn(pipeline->SwapIn()));
    st->stage_s += watch.Lap();
    STRATA_RETURN_IF_ERROR(steps_->Run(*pass, progress_.steps, &st->examples, &st->loss_sum));
    int64_t sums[2] = {st->examples, static_cast<int64_t>(pass->routing.size())};
    double loss[1] = {st->loss_sum};
    STRATA_RETURN_IF_ERROR(comm_->AllreduceSum(sums, 2));
    STRATA_RETURN_IF_ERROR(comm_->AllreduceSum(loss, 1));
    st->examples = sums[0];
    st->keys = sums[1];
    st->loss_sum = loss[0];
    // The same sum on every rank, so every rank stops; before the push-back, so no store
    // receives the diverged rows.
    if (!std::isfinite(st->loss_sum)) {
      return Status::InvalidArgument(fmt::format(
          "training diverged in pass {}: its train logloss is {} (lower --lr-dense or --lr-sparse)", pass->pass,
          st->loss_sum));
    }
    st->train_s = watch.Lap();
    STRATA_RETURN_IF_ERROR(PushBack(pass->routing));
    ReturnFreedMemory();
    st->push_s = watch.Lap();
    st->mpi_bytes = comm_->bytes_sent() - mpi_before;
    return Status::OK();
  }

  // The pass's final rows go home; this rank remembers which it holds for the next refresh.
  Status PushBack(const PassRouting& routing) {
    HbmPs* hbm = parts_.hbm.get();
    const int rank = comm_->rank();
    STRATA_RETURN_IF_ERROR(comm_->AgreeOn(exchange_->PushBack(routing, [hbm, rank](const uint64_t* keys, size_t n, uint8_t* rows) {
      const Status injected = InjectedFailure("push", rank);
      return injected.ok() ? hbm->Export(keys, n, rows) : injected;
    })));
    refresh_.Remember(routing.keys());
    return Status::OK();
  }

  void Advance(const PassData& pass, const PassStats& st) {
    progress_.examples += st.examples;
    progress_.steps += st.steps;
    progress_.loss_sum += st.loss_sum;
    progress_.passes = pass.pass + 1;
    progress_.epoch = pass.epoch;
    progress_.local_lines = pass.lines_after;
  }

  Status Evaluate(PassStats* st) {
    EvalResult r;
    STRATA_RETURN_IF_ERROR(evaluator_->Evaluate(&r));
    refresh_.Forget();  // evaluation overwrote the active tables
    st->evaluated = true;
    st->eval_auc = r.auc;
    st->eval_logloss = r.logloss;
    return Status::OK();
  }

  Status WriteCheckpoint() { return checkpointer_.Write(progress_, *parts_.hbm, parts_.server.get()); }

  Status Finish(const PassStats& eval) {
    JobTotals t;
    t.wall_s = watch_.Seconds();
    t.train_s = train_s_;
    t.passes = progress_.passes;
    t.steps = progress_.steps;
    t.examples = progress_.examples;
    t.examples_here = progress_.examples - resumed_examples_;
    t.loss_here = progress_.loss_sum;
    t.ranks = comm_->size();
    t.workers = parts_.workers;
    t.planned_dram_bytes = parts_.planned_dram_bytes;
    t.mpi_bytes_train = static_cast<int64_t>(train_wire_.sent);
    t.mpi_lower_bound = static_cast<int64_t>(train_wire_.lower_bound);
    t.nccl_bytes_train = static_cast<int64_t>(parts_.hbm->device_bytes_sent());
    uint64_t stored = 0;
    STRATA_RETURN_IF_ERROR(comm_->AgreeOn(parts_.server->NumKeys(&stored)));
    int64_t keys[1] = {static_cast<int64_t>(stored)};
    STRATA_RETURN_IF_ERROR(comm_->AllreduceSum(keys, 1));
    t.keys = keys[0];
    if (!o_.export_rows.empty()) {
      const RowLayout layout = RowLayoutOf(o_.model);
      STRATA_RETURN_IF_ERROR(comm_->AgreeOn(parts_.server->WithStore(
          [&](RowStore& store) { return ExportRowsTsv(store, layout, o_.export_rows, comm_->rank()); })));
    }
    return reporter_->Finish(t, eval);
  }

  const TrainOptions& o_;
  Comm* comm_;
  const Stopwatch watch_;
  double train_s_ = 0;  // the passes' wall time
  JobParts parts_;
  std::unique_ptr<ParamExchange> exchange_;  // the Train stage's, on comm_
  std::unique_ptr<StepLoop> steps_;
  PassPipeline::Wire train_wire_;  // this rank's training traffic (not evaluation's) and its lower bound
  std::unique_ptr<Evaluator> evaluator_;
  std::unique_ptr<PassReporter> reporter_;
  Checkpointer checkpointer_;
  PassRefresh refresh_;
  TrainProgress progress_;  // train logloss and examples/s cover this job's own passes
  int64_t resumed_examples_ = 0;  // those of the checkpoint resumed or started from
  bool resumed_ = false;          // from a checkpoint of this job (not --init-from)
};

}  // namespace

Status RunTraining(const TrainOptions& options, Comm* comm) {
  Job job(options, comm);
  return job.Run();
}

}  // namespace strata
