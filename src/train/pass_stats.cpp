// PassStats formatting.
#include "train/pass_stats.h"

#include "train/pass_data.h"

#include <fmt/format.h>

#include <algorithm>

namespace strata {

void PassStats::Begin(const PassData& p) {
  pass = p.pass;
  epoch = p.epoch;
  steps = p.steps;
  read_s = p.read_s;
  pull_s = p.pull_s;
  stage_s = p.stage_s;
}

double PassStats::overlap_efficiency() const {
  const double slowest = std::max({read_s, pull_s, stage_s, train_s + push_s});
  return wall_s > 0 ? std::min(1.0, slowest / wall_s) : 0;
}

std::string PassStats::ProgressLine() const {
  std::string line = fmt::format(
      "pass {:3d} | epoch {} | examples {:>9} | {:>8.0f} ex/s | train logloss {:.5f}", pass, epoch,
      examples, examples_per_s(), train_logloss());
  if (evaluated) line += fmt::format(" | eval auc {:.5f} logloss {:.5f}", eval_auc, eval_logloss);
  line += fmt::format(" | read {:.2f}s pull {:.2f}s stage {:.2f}s train {:.2f}s push {:.2f}s overlap {:.2f}"
                      " | mpi {:.1f} MB | rss {:.0f} MB",
                      read_s, pull_s, stage_s, train_s, push_s, overlap_efficiency(), mpi_bytes / 1e6,
                      peak_rss_bytes / 1e6);
  if (admits) line += fmt::format(" | rows admitted {} pending {}", rows_admitted, keys_pending);
  if (evicts) line += fmt::format(" | rows evicted {}", rows_evicted);
  if (cache_hits + cache_misses > 0) {
    line += fmt::format(" | cache hit {:.3f} ssd read {} written {} rows, ssd {:.1f}/{:.1f} MB disk/live, compactions {}",
                        cache_hit_rate(), ssd_rows_read, ssd_rows_written, ssd_disk_bytes / 1e6, ssd_live_bytes / 1e6,
                        compactions);
  }
  return line;
}

JsonRecord PassStats::ToJson() const {
  JsonRecord r;
  r.Add("type", "pass").Add("pass", pass).Add("epoch", epoch).Add("examples", examples)
      .Add("steps", steps).Add("keys", keys).Add("examples_per_s", examples_per_s())
      .Add("train_logloss", train_logloss()).Add("read_s", read_s).Add("pull_s", pull_s)
      .Add("stage_s", stage_s).Add("train_s", train_s).Add("push_s", push_s).Add("wall_s", wall_s)
      .Add("mpi_bytes", mpi_bytes).Add("overlap_efficiency", overlap_efficiency())
      .Add("peak_rss_bytes", peak_rss_bytes).Add("cache_hits", cache_hits).Add("cache_misses", cache_misses)
      .Add("cache_hit_rate", cache_hit_rate()).Add("ssd_rows_read", ssd_rows_read)
      .Add("ssd_rows_written", ssd_rows_written).Add("ssd_bytes_read", ssd_bytes_read)
      .Add("ssd_bytes_written", ssd_bytes_written).Add("ssd_disk_bytes", ssd_disk_bytes)
      .Add("ssd_live_bytes", ssd_live_bytes).Add("ssd_index_bytes", ssd_index_bytes)
      .Add("compactions", compactions).Add("dram_rows", dram_rows).Add("dram_bytes", dram_bytes)
      .Add("dram_bytes_per_row", dram_rows > 0 ? static_cast<double>(dram_bytes) / static_cast<double>(dram_rows) : 0.0)
      .Add("rows_admitted", rows_admitted).Add("keys_pending", keys_pending).Add("admission_bytes", admission_bytes)
      .Add("rows_evicted", rows_evicted);
  if (evaluated) r.Add("eval_auc", eval_auc).Add("eval_logloss", eval_logloss);
  return r;
}

}  // namespace strata
