// RunTraining: setup (threads, backend, store, shard plans) and the pass loop.
#include "strata/train/trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "strata/comm/param_exchange.h"
#include "strata/common/row.h"
#include "strata/common/thread_pool.h"
#include "strata/data/criteo_reader.h"
#include "strata/data/input_files.h"
#include "strata/data/shard_plan.h"
#include "strata/hbm/hbm_ps.h"
#include "strata/metrics/auc.h"
#include "strata/metrics/jsonl.h"
#include "strata/model/optimizer.h"
#include "strata/store/row_store.h"
#include "train/pass_stats.h"
#include "train/row_export.h"

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

class Job {
 public:
  Job(const TrainOptions& o, Comm* comm)
      : o_(o), comm_(comm), layout_{o.model.embedding_dim},
        exchange_(comm, layout_.bytes(), o.model.embedding_dim) {}

  Status Run() {
    STRATA_RETURN_IF_ERROR(comm_->AgreeOn(Setup()));
    const Clock::time_point start = Clock::now();
    int pass = 0;
    int64_t examples = 0, steps = 0;
    double loss_sum = 0;
    for (int epoch = 0; epoch < o_.epochs; ++epoch) {
      std::vector<std::unique_ptr<ChunkReader>> readers = OpenReaders(train_plan_);
      for (;;) {
        PassStats st;
        st.pass = pass;
        st.epoch = epoch;
        STRATA_RETURN_IF_ERROR(RunPass(readers, &st));
        if (st.steps == 0) break;
        examples += st.examples;
        steps += st.steps;
        loss_sum += st.loss_sum;
        ++pass;
        if (has_eval_ && o_.eval_every_passes > 0 && pass % o_.eval_every_passes == 0) {
          STRATA_RETURN_IF_ERROR(Evaluate(&st));
        }
        STRATA_RETURN_IF_ERROR(Report(st));
      }
    }
    PassStats final_eval;
    if (has_eval_) STRATA_RETURN_IF_ERROR(Evaluate(&final_eval));
    return Finish(examples, steps, loss_sum, pass, Since(start), final_eval);
  }

 private:
  Status Setup() {
    const int local_ranks = std::max(1, comm_->local_size());
    threads_ = o_.threads > 0 ? o_.threads
                              : std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / local_ranks);
    pool_ = std::make_unique<ThreadPool>(std::min(threads_, o_.workers_per_rank));
    workers_ = comm_->size() * o_.workers_per_rank;
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
    store_ = NewMemoryRowStore(layout_.bytes());
    if (comm_->rank() == 0 && !o_.metrics_out.empty()) STRATA_RETURN_IF_ERROR(metrics_.Open(o_.metrics_out));
    STRATA_RETURN_IF_ERROR(comm_->AgreeOn(Status::OK()));
    STRATA_RETURN_IF_ERROR(PlanInput(comm_, o_.train, workers_, &train_plan_));
    has_eval_ = !o_.eval.empty();
    if (has_eval_) STRATA_RETURN_IF_ERROR(PlanInput(comm_, o_.eval, workers_, &eval_plan_));
    if (comm_->rank() == 0) {
      fmt::print("strata-train: {} ranks x {} workers ({} backend, {} threads/rank), {} train lines, {} eval lines\n",
                 comm_->size(), o_.workers_per_rank, hbm_->name(), threads_, train_plan_.total_lines(),
                 has_eval_ ? eval_plan_.total_lines() : 0);
      std::fflush(stdout);
    }
    return Status::OK();
  }

  std::vector<std::unique_ptr<ChunkReader>> OpenReaders(const ShardPlan& plan) const {
    std::vector<std::unique_ptr<ChunkReader>> readers;
    TsvSchema schema{o_.model.num_slots, o_.model.num_dense};
    for (int g = 0; g < o_.workers_per_rank; ++g) {
      readers.push_back(std::make_unique<ChunkReader>(plan, first_worker() + g, schema));
    }
    return readers;
  }

  int first_worker() const { return comm_->rank() * o_.workers_per_rank; }

  // Reads up to max_batches batches per local worker; agrees on the pass's step count and
  // on the malformed-row budget.
  Status ReadBatches(std::vector<std::unique_ptr<ChunkReader>>& readers, int64_t max_batches,
                     std::vector<std::vector<Batch>>* batches, int64_t* steps) {
    Status local;
    batches->assign(readers.size(), {});
    int64_t most = 0, bad = 0;
    for (size_t g = 0; g < readers.size() && local.ok(); ++g) {
      for (int64_t b = 0; b < max_batches; ++b) {
        Batch batch;
        local = readers[g]->Next(o_.batch_size, &batch);
        if (!local.ok() || batch.num_examples == 0) break;
        (*batches)[g].push_back(std::move(batch));
      }
      most = std::max<int64_t>(most, static_cast<int64_t>((*batches)[g].size()));
      bad += static_cast<int64_t>(readers[g]->bad_rows());
    }
    STRATA_RETURN_IF_ERROR(comm_->AgreeOn(local));
    int64_t totals[1] = {bad};
    STRATA_RETURN_IF_ERROR(comm_->AllreduceSum(totals, 1));
    STRATA_RETURN_IF_ERROR(ReportBadRows(readers, totals[0]));
    int64_t agreed[1] = {most};
    STRATA_RETURN_IF_ERROR(comm_->AllreduceMax(agreed, 1));
    *steps = agreed[0];
    return Status::OK();
  }

  // Warns about new malformed rows; past --max-bad-rows every rank fails with the same
  // message, quoting the first bad row found on the lowest rank that has one.
  Status ReportBadRows(std::vector<std::unique_ptr<ChunkReader>>& readers, int64_t total_bad) {
    std::string first;
    for (auto& r : readers) {
      const auto& msgs = r->bad_row_messages();
      for (size_t i = warned_[r.get()]; i < msgs.size(); ++i) {
        fmt::print(stderr, "strata-train: warning: malformed row skipped: {}\n", msgs[i]);
      }
      warned_[r.get()] = msgs.size();
      if (first.empty() && !msgs.empty()) first = msgs.front();
    }
    if (total_bad <= o_.max_bad_rows) return Status::OK();
    std::vector<std::string> firsts;
    STRATA_RETURN_IF_ERROR(comm_->AllGather(first, &firsts));
    for (const std::string& f : firsts) {
      if (!f.empty()) { first = f; break; }
    }
    return Status::InvalidArgument(fmt::format("{} malformed rows exceed --max-bad-rows {} (first: {})",
                                               total_bad, o_.max_bad_rows, first));
  }

  // Distinct keys of a pass's batches, in first-seen order over workers and batches.
  static std::vector<uint64_t> DistinctKeys(const std::vector<std::vector<Batch>>& batches) {
    std::vector<uint64_t> keys;
    for (const auto& worker : batches) {
      for (const Batch& b : worker) keys.insert(keys.end(), b.keys.begin(), b.keys.end());
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    return keys;
  }

  // Owner side of a pull: rows from the store, absent rows created from (key, seed).
  Status Serve(const uint64_t* keys, size_t n, uint8_t* rows) {
    std::vector<uint8_t> found(n);
    STRATA_RETURN_IF_ERROR(store_->Get(keys, n, rows, found.data()));
    for (size_t i = 0; i < n; ++i) {
      if (!found[i]) InitRow(o_.model, keys[i], rows + i * layout_.bytes());
    }
    return Status::OK();
  }

  // Pulls keys and stages them into the HBM-PS. routing null: read-only (evaluation).
  Status PullAndStage(int pass, const std::vector<uint64_t>& keys, PassRouting* routing, PassStats* st) {
    Clock::time_point t = Clock::now();
    std::vector<uint8_t> rows;
    STRATA_RETURN_IF_ERROR(exchange_.Pull(
        keys, [this](const uint64_t* k, size_t n, uint8_t* r) { return Serve(k, n, r); }, &rows, routing));
    st->pull_s += Since(t);
    t = Clock::now();
    Status local = hbm_->BeginPass(pass, keys.size());
    if (local.ok()) local = hbm_->Insert(keys.data(), keys.size(), rows.data());
    st->stage_s += Since(t);
    return comm_->AgreeOn(local);
  }

  Status RunPass(std::vector<std::unique_ptr<ChunkReader>>& readers, PassStats* st) {
    const Clock::time_point pass_start = Clock::now();
    const uint64_t mpi_before = comm_->bytes_sent();
    const int64_t global_batch = static_cast<int64_t>(workers_) * o_.batch_size;
    const int64_t steps_per_pass = std::max<int64_t>(1, (o_.pass_examples + global_batch - 1) / global_batch);
    std::vector<std::vector<Batch>> batches;
    Clock::time_point t = Clock::now();
    STRATA_RETURN_IF_ERROR(ReadBatches(readers, steps_per_pass, &batches, &st->steps));
    st->read_s = Since(t);
    if (st->steps == 0) return Status::OK();

    PassRouting routing;
    const std::vector<uint64_t> keys = DistinctKeys(batches);
    STRATA_RETURN_IF_ERROR(PullAndStage(st->pass, keys, &routing, st));

    t = Clock::now();
    STRATA_RETURN_IF_ERROR(TrainSteps(batches, routing, st));
    st->train_s = Since(t);

    t = Clock::now();
    std::vector<uint8_t> rows(keys.size() * layout_.bytes());
    STRATA_RETURN_IF_ERROR(comm_->AgreeOn(hbm_->Export(keys.data(), keys.size(), rows.data())));
    STRATA_RETURN_IF_ERROR(exchange_.PushBack(routing, rows.data(),
        [this](const uint64_t* k, size_t n, const uint8_t* r) { return store_->Put(k, n, r); }));
    st->push_s = Since(t);

    int64_t sums[2] = {st->examples, static_cast<int64_t>(keys.size())};
    double loss[1] = {st->loss_sum};
    STRATA_RETURN_IF_ERROR(comm_->AllreduceSum(sums, 2));
    STRATA_RETURN_IF_ERROR(comm_->AllreduceSum(loss, 1));
    st->examples = sums[0];
    st->keys = sums[1];
    st->loss_sum = loss[0];
    st->mpi_bytes = comm_->bytes_sent() - mpi_before;
    st->wall_s = Since(pass_start);
    return Status::OK();
  }

  Status TrainSteps(const std::vector<std::vector<Batch>>& batches, const PassRouting& routing, PassStats* st) {
    const int G = o_.workers_per_rank;
    const float scale = 1.0f / static_cast<float>(static_cast<int64_t>(workers_) * o_.batch_size);
    std::vector<WorkerGrads> grads(G);
    std::vector<Status> status(G);
    std::vector<float> dense_sum(hbm_->num_dense_params());
    std::vector<uint64_t> keys;
    std::vector<float> sparse_sum;
    std::vector<uint32_t> counts;
    DenseReducer dense(comm_, dense_sum.size());
    const Batch empty = EmptyBatch();
    for (int64_t step = 0; step < st->steps; ++step) {
      pool_->ParallelFor(static_cast<size_t>(G), [&](size_t g) {
        const Batch& b = step < static_cast<int64_t>(batches[g].size()) ? batches[g][step] : empty;
        status[g] = hbm_->ComputeGradients(static_cast<int>(g), b, scale, &grads[g]);
      });
      Status local;
      for (const Status& s : status) if (local.ok()) local = s;
      STRATA_RETURN_IF_ERROR(comm_->AgreeOn(local));
      std::vector<SparseGradView> views;
      std::vector<const float*> dense_views;
      for (const WorkerGrads& w : grads) {
        views.push_back({w.keys.data(), w.grads.data(), w.counts.data(), w.keys.size()});
        dense_views.push_back(w.dense.data());
        st->examples += w.examples;
        st->loss_sum += w.loss_sum;
      }
      STRATA_RETURN_IF_ERROR(exchange_.ReduceGradients(routing, views, &keys, &sparse_sum, &counts));
      STRATA_RETURN_IF_ERROR(dense.Reduce(dense_views, dense_sum.data()));
      local = hbm_->ApplySparse(keys.data(), keys.size(), sparse_sum.data(), counts.data());
      if (local.ok()) local = hbm_->ApplyDense(dense_sum.data());
      STRATA_RETURN_IF_ERROR(comm_->AgreeOn(local));
    }
    return Status::OK();
  }

  Batch EmptyBatch() const {
    Batch b;
    b.Clear(o_.model.num_slots, o_.model.num_dense);
    return b;
  }

  // Exact global AUC and logloss over the eval set, the same whatever the topology:
  // predictions travel to every rank in global worker order.
  Status Evaluate(PassStats* st) {
    std::vector<std::unique_ptr<ChunkReader>> readers = OpenReaders(eval_plan_);
    const int64_t per_worker_batches =
        std::max<int64_t>(1, o_.pass_examples / (static_cast<int64_t>(workers_) * o_.batch_size));
    std::vector<std::vector<float>> probs(readers.size()), labels(readers.size());
    for (;;) {
      std::vector<std::vector<Batch>> batches;
      int64_t steps = 0;
      STRATA_RETURN_IF_ERROR(ReadBatches(readers, per_worker_batches, &batches, &steps));
      if (steps == 0) break;
      PassStats ignored;
      STRATA_RETURN_IF_ERROR(PullAndStage(-1, DistinctKeys(batches), nullptr, &ignored));
      std::vector<Status> status(readers.size());
      pool_->ParallelFor(readers.size(), [&](size_t g) {
        for (const Batch& b : batches[g]) {
          const size_t at = probs[g].size();
          probs[g].resize(at + b.num_examples);
          labels[g].insert(labels[g].end(), b.labels.begin(), b.labels.end());
          if (status[g].ok()) status[g] = hbm_->Predict(static_cast<int>(g), b, probs[g].data() + at);
        }
      });
      Status local;
      for (const Status& s : status) if (local.ok()) local = s;
      STRATA_RETURN_IF_ERROR(comm_->AgreeOn(local));
    }
    std::string mine;
    for (size_t g = 0; g < readers.size(); ++g) {
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

  Status Finish(int64_t examples, int64_t steps, double loss_sum, int passes, double wall_s,
                const PassStats& eval) {
    int64_t keys[1] = {static_cast<int64_t>(store_->num_keys())};
    STRATA_RETURN_IF_ERROR(comm_->AllreduceSum(keys, 1));
    if (!o_.export_rows.empty()) {
      STRATA_RETURN_IF_ERROR(comm_->AgreeOn(ExportRowsTsv(*store_, layout_, o_.export_rows, comm_->rank())));
    }
    if (comm_->rank() != 0) return Status::OK();
    const double eps = wall_s > 0 ? examples / wall_s : 0;
    std::string line = fmt::format("done: {} passes, {} steps, {} examples, {:.0f} ex/s, {} keys, train logloss {:.5f}",
                                   passes, steps, examples, eps, keys[0], examples ? loss_sum / examples : 0.0);
    if (eval.evaluated) line += fmt::format(", eval auc {:.5f}, eval logloss {:.5f}", eval.eval_auc, eval.eval_logloss);
    fmt::print("{}\n", line);
    std::fflush(stdout);
    if (metrics_.path().empty()) return Status::OK();
    JsonRecord r;
    r.Add("type", "final").Add("passes", passes).Add("steps", steps).Add("examples", examples)
        .Add("examples_per_s", eps).Add("wall_s", wall_s).Add("keys", keys[0])
        .Add("train_logloss", examples ? loss_sum / examples : 0.0).Add("mpi_bytes", comm_->bytes_sent())
        .Add("ranks", comm_->size()).Add("workers", workers_);
    if (eval.evaluated) r.Add("eval_auc", eval.eval_auc).Add("eval_logloss", eval.eval_logloss);
    return metrics_.Write(r);
  }

  const TrainOptions& o_;
  Comm* comm_;
  RowLayout layout_;
  ParamExchange exchange_;
  int threads_ = 1;
  int workers_ = 1;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<HbmPs> hbm_;
  std::unique_ptr<RowStore> store_;
  ShardPlan train_plan_, eval_plan_;
  bool has_eval_ = false;
  JsonlWriter metrics_;
  std::unordered_map<const ChunkReader*, size_t> warned_;
};

}  // namespace

Status RunTraining(const TrainOptions& options, Comm* comm) {
  Job job(options, comm);
  return job.Run();
}

}  // namespace strata
