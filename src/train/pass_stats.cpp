// PassStats formatting.
#include "train/pass_stats.h"

#include <fmt/format.h>

namespace strata {

std::string PassStats::ProgressLine() const {
  std::string line = fmt::format(
      "pass {:3d} | epoch {} | examples {:>9} | {:>8.0f} ex/s | train logloss {:.5f}", pass, epoch,
      examples, examples_per_s(), train_logloss());
  if (evaluated) line += fmt::format(" | eval auc {:.5f} logloss {:.5f}", eval_auc, eval_logloss);
  line += fmt::format(" | read {:.2f}s pull {:.2f}s stage {:.2f}s train {:.2f}s push {:.2f}s | mpi {:.1f} MB",
                      read_s, pull_s, stage_s, train_s, push_s, mpi_bytes / 1e6);
  return line;
}

JsonRecord PassStats::ToJson() const {
  JsonRecord r;
  r.Add("type", "pass").Add("pass", pass).Add("epoch", epoch).Add("examples", examples)
      .Add("steps", steps).Add("keys", keys).Add("examples_per_s", examples_per_s())
      .Add("train_logloss", train_logloss()).Add("read_s", read_s).Add("pull_s", pull_s)
      .Add("stage_s", stage_s).Add("train_s", train_s).Add("push_s", push_s).Add("wall_s", wall_s)
      .Add("mpi_bytes", mpi_bytes);
  if (evaluated) r.Add("eval_auc", eval_auc).Add("eval_logloss", eval_logloss);
  return r;
}

}  // namespace strata
