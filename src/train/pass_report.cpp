// PassReporter: tier deltas, peak RSS, progress lines and JSONL records.
#include "train/pass_report.h"

#include <fmt/format.h>

#include "strata/common/process_memory.h"

namespace strata {

Status PassReporter::Open(const std::string& metrics_path) {
  if (comm_->rank() != 0 || metrics_path.empty()) return Status::OK();
  return metrics_.Open(metrics_path);
}

void PassReporter::FillTiers(const TierCounters& d, PassStats* st) const {
  st->cache_hits = d[TierCounters::kCacheHits];
  st->cache_misses = d[TierCounters::kCacheMisses];
  st->ssd_rows_read = d[TierCounters::kSsdRowsRead];
  st->ssd_rows_written = d[TierCounters::kSsdRowsWritten];
  st->ssd_bytes_read = d[TierCounters::kSsdBytesRead];
  st->ssd_bytes_written = d[TierCounters::kSsdBytesWritten];
  st->ssd_disk_bytes = d[TierCounters::kSsdDiskBytes];
  st->compactions = d[TierCounters::kCompactions];
  st->ssd_live_bytes = d[TierCounters::kSsdLiveBytes];
  st->ssd_index_bytes = d[TierCounters::kSsdIndexBytes];
  st->dram_rows = d[TierCounters::kDramRows];
  st->dram_bytes = d[TierCounters::kDramBytes];
  st->admission_bytes = d[TierCounters::kAdmissionBytes];
}

// As the ledgers stood after this pass, whatever later passes the pipeline pulled since.
// Eviction's count of the pass applies a buffered write-back first (it releases the pass).
Status PassReporter::ReportAdmission(PassStats* st) {
  st->admits = server_->admits();
  st->evicts = evicts_;
  if (!st->admits && !st->evicts) return Status::OK();
  const AdmissionTotals now = server_->AdmissionThrough(st->pass);
  int64_t sums[3] = {now.admitted - admitted_before_, now.pending, 0};
  admitted_before_ = now.admitted;
  Status local = st->evicts ? server_->EvictedAt(st->pass, &sums[2]) : Status::OK();
  STRATA_RETURN_IF_ERROR(comm_->AgreeOn(local));
  STRATA_RETURN_IF_ERROR(comm_->AllreduceSum(sums, 3));
  st->rows_admitted = sums[0];
  st->keys_pending = sums[1];
  st->rows_evicted = sums[2];
  return Status::OK();
}

// The pass's share of a cumulative counter is the difference to the previous pass; a level
// is taken as it stands.
Status PassReporter::Report(PassStats* st) {
  TierCounters now;
  STRATA_RETURN_IF_ERROR(comm_->AgreeOn(server_->Counters(&now)));
  TierCounters delta;
  for (int f = 0; f < TierCounters::kFields; ++f) delta[f] = now[f] - (TierCounters::IsLevel(f) ? 0 : before_[f]);
  before_ = now;
  STRATA_RETURN_IF_ERROR(comm_->AllreduceSum(delta.v, TierCounters::kFields));
  FillTiers(delta, st);
  STRATA_RETURN_IF_ERROR(ReportAdmission(st));
  int64_t rss[1] = {PeakRssBytes()};
  STRATA_RETURN_IF_ERROR(comm_->AllreduceMax(rss, 1));
  st->peak_rss_bytes = rss[0];
  if (comm_->rank() != 0) return Status::OK();
  fmt::print("{}\n", st->ProgressLine());
  std::fflush(stdout);
  return metrics_.path().empty() ? Status::OK() : metrics_.Write(st->ToJson());
}

Status PassReporter::Finish(const JobTotals& t, const PassStats& eval) {
  int64_t rss[2] = {PeakRssBytes(), t.planned_dram_bytes};  // the largest of any rank
  STRATA_RETURN_IF_ERROR(comm_->AllreduceMax(rss, 2));
  int64_t wire[3] = {t.mpi_bytes_train, t.mpi_lower_bound, t.nccl_bytes_train};  // job-wide
  STRATA_RETURN_IF_ERROR(comm_->AllreduceSum(wire, 3));
  if (comm_->rank() != 0) return Status::OK();
  const double eps = t.train_s > 0 ? t.examples_here / t.train_s : 0;
  const double train_logloss = t.examples_here ? t.loss_here / t.examples_here : 0.0;
  std::string line = fmt::format("done: {} passes, {} steps, {} examples, {:.0f} ex/s, {} keys, train logloss {:.5f}",
                                 t.passes, t.steps, t.examples, eps, t.keys, train_logloss);
  if (eval.evaluated) line += fmt::format(", eval auc {:.5f}, eval logloss {:.5f}", eval.eval_auc, eval.eval_logloss);
  fmt::print("{}\n", line);
  std::fflush(stdout);
  if (metrics_.path().empty()) return Status::OK();
  JsonRecord r;
  r.Add("type", "final").Add("passes", t.passes).Add("steps", t.steps).Add("examples", t.examples)
      .Add("examples_per_s", eps).Add("train_s", t.train_s).Add("wall_s", t.wall_s).Add("keys", t.keys)
      .Add("train_logloss", train_logloss).Add("mpi_bytes", comm_->bytes_sent())
      .Add("ranks", t.ranks).Add("workers", t.workers).Add("peak_rss_bytes", rss[0])
      .Add("planned_dram_bytes", rss[1]).Add("mpi_bytes_job", wire[0]).Add("mpi_bytes_lower_bound", wire[1])
      .Add("nccl_bytes_job", wire[2]);
  if (eval.evaluated) r.Add("eval_auc", eval.eval_auc).Add("eval_logloss", eval.eval_logloss);
  return metrics_.Write(r);
}

}  // namespace strata
