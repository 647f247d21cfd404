// RunTraining: setup (threads, backend, row stores, shard plans), then the Train stage of
// the pipeline on this thread: refresh and insert each pass's rows, run its global steps,
// push the rows home; evaluation and the final report.
#include "strata/train/trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include "strata/comm/param_exchange.h"
#include "strata/common/key_index.h"
#include "strata/common/row.h"
#include "strata/common/thread_pool.h"
#include "strata/data/input_files.h"
#include "strata/data/shard_plan.h"
#include "strata/hbm/hbm_ps.h"
#include "strata/metrics/auc.h"
#include "strata/metrics/jsonl.h"
#include "strata/model/optimizer.h"
#include "train/checkpointer.h"
#include "train/pass_pipeline.h"
#include "train/pass_stats.h"
#include "train/row_export.h"
#include "train/row_stores.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Rank 0 expands the globs and plans the shards; every rank receives the same plan.
Status PlanInput(Comm* comm, const std::vector<std::string>& patterns, int workers, ShardPlan* plan) {
  std::string bytes;
  Status local;
  if (comm->rank() == 0) {
    std::vector<std::string> files;
    local = ExpandInputs(patterns, &files);
    if (local.ok()) local = PlanShards(files, workers, plan);
    if (local.ok()) bytes = plan->Serialize();
  }
  STRATA_RETURN_IF_ERROR(comm->AgreeOn(local));
  STRATA_RETURN_IF_ERROR(comm->Broadcast(&bytes, 0));
  return ShardPlan::Deserialize(bytes, plan);
}

// The process's peak resident set (VmHWM), in bytes.
int64_t PeakRssBytes() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  int64_t kb = 0;
  while (std::fgets(line, sizeof(line), f)) {
    if (std::sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
  }
  std::fclose(f);
  return kb * 1024;
}

Status FirstError(const std::vector<Status>& all) {
  for (const Status& s : all) {
    if (!s.ok()) return s;
  }
  return Status::OK();
}

class Job {
 public:
  Job(const TrainOptions& o, Comm* comm)
      : o_(o), comm_(comm), layout_{o.model.embedding_dim},
        exchange_(comm, layout_.bytes(), o.model.embedding_dim), checkpointer_(o, comm) {}

  Status Run() {
    STRATA_RETURN_IF_ERROR(comm_->AgreeOn(Setup()));
    ReadPosition from;
    if (!o_.resume.empty()) {
      STRATA_RETURN_IF_ERROR(checkpointer_.Resume(
          [this](const uint64_t* k, size_t n, const uint8_t* r) {
            STRATA_RETURN_IF_ERROR(stores_.store->Put(k, n, r));
            return stores_.mem ? stores_.mem->Evict() : Status::OK();
          },
          hbm_.get(), &progress_));
      from = ReadPosition{progress_.passes, progress_.epoch, progress_.local_lines};
      resumed_examples_ = progress_.examples;
      if (comm_->rank() == 0) fmt::print("strata-train: resumed after pass {} ({} examples)\n", progress_.passes, progress_.examples);
    }
    std::unique_ptr<PassPipeline> pipeline;
    STRATA_RETURN_IF_ERROR(PassPipeline::Start(o_, train_plan_, comm_, TrainHooks(), from, o_.pipeline, &pipeline));
    Status st = TrainAll(pipeline.get());
    pipeline->Stop();
    STRATA_RETURN_IF_ERROR(st);
    if (checkpointer_.enabled() && last_checkpoint_ != progress_.passes) {
      STRATA_RETURN_IF_ERROR(checkpointer_.Write(progress_, *hbm_, *stores_.store, store_mu_));
    }
    PassStats final_eval;
    if (has_eval_) STRATA_RETURN_IF_ERROR(Evaluate(&final_eval));
    return Finish(final_eval);
  }

 private:
  Status Setup() {
    const int local_ranks = std::max(1, comm_->local_size());
    threads_ = o_.threads > 0 ? o_.threads
                              : std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / local_ranks);
    pool_ = std::make_unique<ThreadPool>(std::min(threads_, o_.workers_per_rank));
    workers_ = comm_->size() * o_.workers_per_rank;
    if (o_.pipeline && !MpiSession::ThreadMultiple()) {
      return Status::InvalidArgument("--pipeline on needs MPI_THREAD_MULTIPLE, which this MPI does not provide; use --pipeline off");
    }
    HbmOptions ho;
    ho.spec = o_.model;
    ho.workers = o_.workers_per_rank;
    ho.threads = threads_;
    ho.max_batch = o_.batch_size;
    const bool cuda = o_.device == "cuda" || (o_.device == "auto" && CudaDeviceCount() > 0);
    if (cuda) {
      STRATA_RETURN_IF_ERROR(NewCudaHbmPs(ho, &hbm_));
    } else {
      hbm_ = NewHostHbmPs(ho);
    }
    STRATA_RETURN_IF_ERROR(OpenRowStores(o_, comm_->rank(), layout_.bytes(), &stores_));
    if (comm_->rank() == 0 && !o_.metrics_out.empty()) STRATA_RETURN_IF_ERROR(metrics_.Open(o_.metrics_out));
    STRATA_RETURN_IF_ERROR(comm_->AgreeOn(Status::OK()));
    STRATA_RETURN_IF_ERROR(PlanInput(comm_, o_.train, workers_, &train_plan_));
    has_eval_ = !o_.eval.empty();
    if (has_eval_) STRATA_RETURN_IF_ERROR(PlanInput(comm_, o_.eval, workers_, &eval_plan_));
    if (comm_->rank() == 0) {
      fmt::print("strata-train: {} ranks x {} workers ({} backend, {} threads/rank, {}), {} train lines, {} eval lines\n",
                 comm_->size(), o_.workers_per_rank, hbm_->name(), threads_,
                 stores_.mem ? fmt::format("MEM-PS {} GB over SSD-PS in {}", o_.mem_cache_gb, o_.ssd_dir)
                             : std::string("rows in DRAM"),
                 train_plan_.total_lines(), has_eval_ ? eval_plan_.total_lines() : 0);
      std::fflush(stdout);
    }
    return Status::OK();
  }

  PipelineHooks TrainHooks() {
    PipelineHooks h;
    h.serve = [this](int pass, const uint64_t* k, size_t n, uint8_t* r, uint8_t* f) { return Serve(pass, k, n, r, f); };
    if (Announcing()) {
      // A pass read ahead: its rows are pinned a pass before its pull, so the evictions in
      // between spare them (strata/mem/cache_policy.h).
      h.announce = [this](int pass, const uint64_t* k, size_t n) {
        std::shared_lock lock(store_mu_);  // MemPs::Pin may run beside Get and Pin
        stores_.mem->Pin(k, n, pass);
        return Status::OK();
      };
    }
    h.pulled = [this](const PassData& p) {
      std::lock_guard lock(store_mu_);
      in_flight_[p.pass] = p.routing;
    };
    return h;
  }

  // With a MEM-PS, the pipeline's Read stage announces each pass's keys (the same keys its
  // pull will ask for) to their owners, which pin them then; without threads nothing is
  // announced and the pull pins.
  bool Announcing() const { return stores_.mem != nullptr && o_.pipeline; }

  // Owner side of a pull: rows from the store, absent rows created from (key, seed). A
  // row that an earlier pass still holds (pulled, not yet pushed back) is flagged so the
  // requester refreshes it before training with it. pass < 0: read-only, pins nothing.
  // Serves run beside each other (the Pull thread's and the training thread's refresh):
  // they only read the store and pin, which MemPs allows concurrently. Before a pass's
  // pull the MEM-PS evicts down to its budget, here on the Pull thread, so its writes to
  // the SSD-PS overlap training instead of lengthening the pass-end write-back.
  Status Serve(int pass, const uint64_t* keys, size_t n, uint8_t* rows, uint8_t* flags) {
    if (n == 0) return Status::OK();
    if (stores_.mem && pass >= 0) {
      std::lock_guard lock(store_mu_);
      if (!Announcing()) stores_.mem->Pin(keys, n, pass);  // else pinned when read
      STRATA_RETURN_IF_ERROR(stores_.mem->Evict());
    }
    std::vector<uint8_t> found(n);
    std::shared_lock lock(store_mu_);
    STRATA_RETURN_IF_ERROR(stores_.store->Get(keys, n, rows, found.data()));
    for (size_t i = 0; i < n; ++i) {
      if (!found[i]) InitRow(o_.model, keys[i], rows + i * layout_.bytes());
      flags[i] = 0;
      for (const auto& [p, routing] : in_flight_) {
        if (p < pass && routing->index_of.Find(keys[i]) != KeyIndex::kNone) flags[i] = 1;
      }
    }
    return Status::OK();
  }

  Status TrainAll(PassPipeline* pipeline) {
    for (;;) {
      const Clock::time_point waited_from = Clock::now();
      PassData pass = pipeline->Next();
      STRATA_RETURN_IF_ERROR(pass.error);
      if (pass.last) return Status::OK();
      PassStats st;
      st.pass = pass.pass;
      st.epoch = pass.epoch;
      st.steps = pass.steps;
      st.read_s = pass.read_s;
      st.pull_s = pass.pull_s;
      st.stage_s = pass.stage_s;
      STRATA_RETURN_IF_ERROR(TrainPass(&pass, &st));
      st.wall_s = Since(waited_from);
      STRATA_RETURN_IF_ERROR(TierStats(&st));
      progress_.examples += st.examples;
      progress_.steps += st.steps;
      progress_.loss_sum += st.loss_sum;
      progress_.passes = pass.pass + 1;
      progress_.epoch = pass.epoch;
      progress_.local_lines = pass.lines_after;
      if (has_eval_ && o_.eval_every_passes > 0 && progress_.passes % o_.eval_every_passes == 0) {
        STRATA_RETURN_IF_ERROR(Evaluate(&st));
      }
      STRATA_RETURN_IF_ERROR(Report(st));
      if (checkpointer_.enabled() && o_.checkpoint_every_passes > 0 &&
          progress_.passes % o_.checkpoint_every_passes == 0) {
        STRATA_RETURN_IF_ERROR(checkpointer_.Write(progress_, *hbm_, *stores_.store, store_mu_));
        last_checkpoint_ = progress_.passes;
      }
    }
  }

  Status TrainPass(PassData* pass, PassStats* st) {
    const uint64_t mpi_before = comm_->bytes_sent();
    Clock::time_point t = Clock::now();
    STRATA_RETURN_IF_ERROR(Refresh(pass));
    Status local = hbm_->BeginPass(pass->pass, pass->keys.size());
    if (local.ok()) local = hbm_->Insert(pass->keys.data(), pass->keys.size(), pass->rows.data());
    std::vector<uint8_t>().swap(pass->rows);  // the HBM-PS holds them now
    STRATA_RETURN_IF_ERROR(comm_->AgreeOn(local));
    st->stage_s += Since(t);

    t = Clock::now();
    STRATA_RETURN_IF_ERROR(TrainSteps(*pass, st));
    st->train_s = Since(t);

    t = Clock::now();
    STRATA_RETURN_IF_ERROR(PushBack(pass));
    st->push_s = Since(t);

    int64_t sums[2] = {st->examples, static_cast<int64_t>(pass->keys.size())};
    double loss[1] = {st->loss_sum};
    STRATA_RETURN_IF_ERROR(comm_->AllreduceSum(sums, 2));
    STRATA_RETURN_IF_ERROR(comm_->AllreduceSum(loss, 1));
    st->examples = sums[0];
    st->keys = sums[1];
    st->loss_sum = loss[0];
    st->mpi_bytes = comm_->bytes_sent() - mpi_before;
    return Status::OK();
  }

  // Cache and SSD counters of the pass (deltas, summed over ranks) and the peak RSS.
  Status TierStats(PassStats* st) {
    int64_t now[10] = {};
    Status local;
    if (stores_.mem) {
      std::shared_lock lock(store_mu_);
      const MemPsStats m = stores_.mem->mem_stats();
      StoreStats d;  // the SSD-PS's, checked against its disk bound (waits only when over it)
      local = stores_.ssd->WaitForDiskBound(&d);
      const int64_t values[10] = {int64_t(m.hits), int64_t(m.misses), int64_t(m.backing_rows_read),
                                  int64_t(m.rows_flushed), int64_t(d.bytes_read), int64_t(d.bytes_written),
                                  int64_t(d.disk_bytes), int64_t(d.compactions), int64_t(d.live_bytes),
                                  int64_t(d.index_bytes)};
      std::copy(values, values + 10, now);
    }
    STRATA_RETURN_IF_ERROR(comm_->AgreeOn(local));
    int64_t delta[10];  // 6, 8 and 9 are levels, the rest counters
    for (int i = 0; i < 10; ++i) delta[i] = now[i] - (i == 6 || i >= 8 ? 0 : tier_before_[i]);
    std::copy(now, now + 8, tier_before_);
    STRATA_RETURN_IF_ERROR(comm_->AllreduceSum(delta, 10));
    st->cache_hits = delta[0];
    st->cache_misses = delta[1];
    st->ssd_rows_read = delta[2];
    st->ssd_rows_written = delta[3];
    st->ssd_bytes_read = delta[4];
    st->ssd_bytes_written = delta[5];
    st->ssd_disk_bytes = delta[6];
    st->compactions = delta[7];
    st->ssd_live_bytes = delta[8];
    st->ssd_index_bytes = delta[9];
    int64_t rss[1] = {PeakRssBytes()};
    STRATA_RETURN_IF_ERROR(comm_->AllreduceMax(rss, 1));
    st->peak_rss_bytes = rss[0];
    return Status::OK();
  }

  // Rows flagged at pull time were held by an earlier pass then; now that every earlier
  // pass is home, take this rank's own copy from the previous pass, or pull them again.
  Status Refresh(PassData* pass) {
    const size_t rb = layout_.bytes();
    std::vector<uint64_t> again;
    std::vector<size_t> again_at;
    for (size_t i = 0; i < pass->keys.size(); ++i) {
      if (!pass->in_flight[i]) continue;
      const uint32_t j = prev_index_.Find(pass->keys[i]);
      if (j != KeyIndex::kNone) {
        std::copy_n(&prev_rows_[j * rb], rb, &pass->rows[i * rb]);
      } else {
        again.push_back(pass->keys[i]);
        again_at.push_back(i);
      }
    }
    std::vector<uint8_t> rows, flags;
    STRATA_RETURN_IF_ERROR(exchange_.Pull(again, ReadOnlyServer(), &rows, &flags, nullptr));
    for (size_t k = 0; k < again.size(); ++k) std::copy_n(&rows[k * rb], rb, &pass->rows[again_at[k] * rb]);
    return Status::OK();
  }

  RowServer ReadOnlyServer() {
    return [this](const uint64_t* k, size_t n, uint8_t* r, uint8_t* f) { return Serve(-1, k, n, r, f); };
  }

  // Final rows go home; the owner stores them and retires the pass from the in-flight set
  // under one hold of the store lock, so a concurrent pull sees either the old row with the
  // flag or the new row without it. The lock is held across the exchange's collectives;
  // that cannot deadlock, since Serve never holds it across one.
  Status PushBack(PassData* pass) {
    prev_rows_.resize(pass->keys.size() * layout_.bytes());
    STRATA_RETURN_IF_ERROR(comm_->AgreeOn(hbm_->Export(pass->keys.data(), pass->keys.size(), prev_rows_.data())));
    Status local;
    {
      std::lock_guard lock(store_mu_);
      STRATA_RETURN_IF_ERROR(exchange_.PushBack(*pass->routing, prev_rows_.data(),
          [&](const uint64_t* k, size_t n, const uint8_t* r) {
            if (local.ok()) local = stores_.store->Put(k, n, r);
            return Status::OK();  // a local store error is agreed on below, after the collective
          }));
      in_flight_.erase(pass->pass);
      // The MEM-PS moves to the next pass here, under the lock this write-back holds
      // anyway, rather than when that pass starts training: the next pass's pull may be
      // reading the store then, and training would wait for it.
      if (local.ok() && stores_.mem) local = stores_.mem->UnpinPass(pass->pass);
      if (local.ok() && stores_.mem) local = stores_.mem->BeginPass(pass->pass + 1);
    }
    prev_index_.Reset(pass->keys.size());
    for (uint64_t k : pass->keys) prev_index_.Insert(k);
    return comm_->AgreeOn(local);
  }

  Status TrainSteps(const PassData& pass, PassStats* st) {
    const int G = o_.workers_per_rank;
    const float scale = 1.0f / static_cast<float>(static_cast<int64_t>(workers_) * o_.batch_size);
    std::vector<WorkerGrads> grads(G);
    std::vector<Status> status(G);
    std::vector<float> dense_sum(hbm_->num_dense_params());
    std::vector<uint64_t> keys;
    std::vector<float> sparse_sum;
    std::vector<uint32_t> counts;
    DenseReducer dense(comm_, dense_sum.size());
    Batch empty;
    empty.Clear(o_.model.num_slots, o_.model.num_dense);
    for (int64_t step = 0; step < pass.steps; ++step) {
      pool_->ParallelFor(static_cast<size_t>(G), [&](size_t g) {
        const Batch& b = step < static_cast<int64_t>(pass.batches[g].size()) ? pass.batches[g][step] : empty;
        status[g] = hbm_->ComputeGradients(static_cast<int>(g), b, scale, &grads[g]);
      });
      STRATA_RETURN_IF_ERROR(comm_->AgreeOn(FirstError(status)));
      std::vector<SparseGradView> views;
      std::vector<const float*> dense_views;
      for (const WorkerGrads& w : grads) {
        views.push_back({w.keys.data(), w.grads.data(), w.counts.data(), w.keys.size()});
        dense_views.push_back(w.dense.data());
        st->examples += w.examples;
        st->loss_sum += w.loss_sum;
      }
      STRATA_RETURN_IF_ERROR(exchange_.ReduceGradients(*pass.routing, views, &keys, &sparse_sum, &counts));
      STRATA_RETURN_IF_ERROR(dense.Reduce(dense_views, dense_sum.data()));
      Status local = hbm_->ApplySparse(keys.data(), keys.size(), sparse_sum.data(), counts.data());
      if (local.ok()) local = hbm_->ApplyDense(dense_sum.data());
      STRATA_RETURN_IF_ERROR(comm_->AgreeOn(local));
    }
    return Status::OK();
  }

  // Exact global AUC and logloss over the eval set, the same whatever the topology:
  // predictions travel to every rank in global worker order.
  Status Evaluate(PassStats* st) {
    TrainOptions eval_options = o_;
    eval_options.epochs = 1;
    PipelineHooks hooks;
    hooks.serve = [this](int, const uint64_t* k, size_t n, uint8_t* r, uint8_t* f) { return Serve(-1, k, n, r, f); };
    std::unique_ptr<PassPipeline> reader;
    STRATA_RETURN_IF_ERROR(PassPipeline::Start(eval_options, eval_plan_, comm_, hooks, ReadPosition{}, false, &reader));
    const int G = o_.workers_per_rank;
    std::vector<std::vector<float>> probs(G), labels(G);
    for (;;) {
      PassData pass = reader->Next();
      STRATA_RETURN_IF_ERROR(pass.error);
      if (pass.last) break;
      Status local = hbm_->BeginPass(-1, pass.keys.size());
      if (local.ok()) local = hbm_->Insert(pass.keys.data(), pass.keys.size(), pass.rows.data());
      STRATA_RETURN_IF_ERROR(comm_->AgreeOn(local));
      std::vector<Status> status(G);
      pool_->ParallelFor(static_cast<size_t>(G), [&](size_t g) {
        for (const Batch& b : pass.batches[g]) {
          const size_t at = probs[g].size();
          probs[g].resize(at + b.num_examples);
          labels[g].insert(labels[g].end(), b.labels.begin(), b.labels.end());
          if (status[g].ok()) status[g] = hbm_->Predict(static_cast<int>(g), b, probs[g].data() + at);
        }
      });
      STRATA_RETURN_IF_ERROR(comm_->AgreeOn(FirstError(status)));
    }
    std::string mine;
    for (int g = 0; g < G; ++g) {
      for (size_t i = 0; i < probs[g].size(); ++i) {
        mine.append(reinterpret_cast<const char*>(&probs[g][i]), sizeof(float));
        mine.append(reinterpret_cast<const char*>(&labels[g][i]), sizeof(float));
      }
    }
    std::vector<std::string> all;
    STRATA_RETURN_IF_ERROR(comm_->AllGather(mine, &all));
    std::vector<float> p, y;
    for (const std::string& part : all) {
      const float* f = reinterpret_cast<const float*>(part.data());
      for (size_t i = 0; i + 1 < part.size() / sizeof(float); i += 2) {
        p.push_back(f[i]);
        y.push_back(f[i + 1]);
      }
    }
    st->evaluated = true;
    st->eval_auc = ExactAuc(p.data(), y.data(), p.size());
    st->eval_logloss = LogLoss(p.data(), y.data(), p.size());
    return Status::OK();
  }

  Status Report(const PassStats& st) {
    if (comm_->rank() != 0) return Status::OK();
    fmt::print("{}\n", st.ProgressLine());
    std::fflush(stdout);
    return metrics_.path().empty() ? Status::OK() : metrics_.Write(st.ToJson());
  }

  Status Finish(const PassStats& eval) {
    const double wall_s = Since(start_);
    int64_t rss[1] = {PeakRssBytes()};
    STRATA_RETURN_IF_ERROR(comm_->AllreduceMax(rss, 1));
    int64_t keys[1] = {static_cast<int64_t>(stores_.store->num_keys())};
    STRATA_RETURN_IF_ERROR(comm_->AllreduceSum(keys, 1));
    if (!o_.export_rows.empty()) {
      STRATA_RETURN_IF_ERROR(comm_->AgreeOn(ExportRowsTsv(*stores_.store, layout_, o_.export_rows, comm_->rank())));
    }
    if (comm_->rank() != 0) return Status::OK();
    const TrainProgress& t = progress_;
    const int64_t trained_here = t.examples - resumed_examples_;
    const double eps = wall_s > 0 ? trained_here / wall_s : 0;
    const double train_logloss = trained_here ? t.loss_sum / trained_here : 0.0;
    std::string line = fmt::format("done: {} passes, {} steps, {} examples, {:.0f} ex/s, {} keys, train logloss {:.5f}",
                                   t.passes, t.steps, t.examples, eps, keys[0], train_logloss);
    if (eval.evaluated) line += fmt::format(", eval auc {:.5f}, eval logloss {:.5f}", eval.eval_auc, eval.eval_logloss);
    fmt::print("{}\n", line);
    std::fflush(stdout);
    if (metrics_.path().empty()) return Status::OK();
    JsonRecord r;
    r.Add("type", "final").Add("passes", t.passes).Add("steps", t.steps).Add("examples", t.examples)
        .Add("examples_per_s", eps).Add("wall_s", wall_s).Add("keys", keys[0])
        .Add("train_logloss", train_logloss).Add("mpi_bytes", comm_->bytes_sent())
        .Add("ranks", comm_->size()).Add("workers", workers_).Add("peak_rss_bytes", rss[0]);
    if (eval.evaluated) r.Add("eval_auc", eval.eval_auc).Add("eval_logloss", eval.eval_logloss);
    return metrics_.Write(r);
  }

  const TrainOptions& o_;
  Comm* comm_;
  RowLayout layout_;
  ParamExchange exchange_;
  const Clock::time_point start_ = Clock::now();
  int threads_ = 1;
  int workers_ = 1;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<HbmPs> hbm_;
  RowStores stores_;
  ShardPlan train_plan_, eval_plan_;
  bool has_eval_ = false;
  JsonlWriter metrics_;
  Checkpointer checkpointer_;
  TrainProgress progress_;       // train logloss and examples/s cover this job's own passes
  int64_t resumed_examples_ = 0;
  int last_checkpoint_ = -1;
  int64_t tier_before_[8] = {};  // cumulative tier counters at the previous pass
  // The previous pass's keys and final rows on this rank, for Refresh.
  KeyIndex prev_index_;
  std::vector<uint8_t> prev_rows_;
  // Owner-side state shared with the Pull stage's thread.
  // Shared: pulls (Serve) and pins; exclusive: writes (push-back, checkpoints) and in_flight_.
  std::shared_mutex store_mu_;
  std::map<int, std::shared_ptr<PassRouting>> in_flight_;  // protected by store_mu_
};

}  // namespace

Status RunTraining(const TrainOptions& options, Comm* comm) {
  Job job(options, comm);
  return job.Run();
}

}  // namespace strata
