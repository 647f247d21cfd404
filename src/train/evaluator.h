// Evaluator: exact global AUC and logloss of the current model over the eval set, the same
// whatever the topology. Each eval pass is pulled read-only (nothing pinned or held) and
// loaded into the HBM-PS active tables, which it overwrites; every rank's predictions then
// travel to every rank in global worker order. A collective on the Comm given; errors are
// agreed on (an eval set without one example is one). An eval set of one class, whose AUC
// is undefined (NaN), gets a note from rank 0, once. Not thread-safe: the Train stage's
// thread.
#pragma once

#include <vector>

#include "strata/comm/comm.h"
#include "strata/common/thread_pool.h"
#include "strata/data/shard_plan.h"
#include "strata/hbm/hbm_ps.h"
#include "strata/ps/shard_server.h"
#include "strata/train/options.h"

namespace strata {

struct PassData;

struct EvalResult {
  double auc = 0;
  double logloss = 0;
  int64_t examples = 0;
  // With keep_predictions: every example's probability and label, in input order.
  std::vector<float> probabilities, labels;
};

class Evaluator {
 public:
  // REQUIRES: every argument outlives the evaluator.
  Evaluator(const TrainOptions& options, const ShardPlan& plan, Comm* comm, ShardServer* server, HbmPs* hbm,
            ThreadPool* pool)
      : o_(options), plan_(plan), comm_(comm), server_(server), hbm_(hbm), pool_(pool) {}

  Status Evaluate(EvalResult* out, bool keep_predictions = false);

 private:
  // Appends the predictions and labels of one eval pass, per local worker.
  Status PredictPass(const PassData& pass, std::vector<std::vector<float>>* probs,
                     std::vector<std::vector<float>>* labels);
  void NoteOneClass(const std::vector<float>& labels);

  const TrainOptions& o_;
  const ShardPlan& plan_;
  Comm* comm_;
  ShardServer* server_;
  HbmPs* hbm_;
  ThreadPool* pool_;
  bool noted_one_class_ = false;
};

}  // namespace strata
