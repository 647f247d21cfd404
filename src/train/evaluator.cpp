// Evaluator: read-only eval passes, predictions in global worker order, exact metrics.
#include "train/evaluator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "strata/comm/wire.h"
#include "strata/metrics/auc.h"
#include "train/pass_pipeline.h"

namespace strata {
Status Evaluator::PredictPass(const PassData& pass, std::vector<std::vector<float>>* probs,
                              std::vector<std::vector<float>>* labels) {
  Status local = hbm_->BeginPass(-1, pass.keys.size());
  pass.rows.ForEachPart(pass.keys, [&](const uint64_t* keys, size_t n, const uint8_t* rows) {
    if (local.ok()) local = hbm_->Insert(keys, n, rows);
  });
  STRATA_RETURN_IF_ERROR(comm_->AgreeOn(local));
  std::vector<Status> status(probs->size());
  pool_->ParallelFor(probs->size(), [&](size_t g) {
    for (const Batch& b : pass.batches[g]) {
      const size_t at = (*probs)[g].size();
      (*probs)[g].resize(at + b.num_examples);
      (*labels)[g].insert((*labels)[g].end(), b.labels.begin(), b.labels.end());
      if (status[g].ok()) status[g] = hbm_->Predict(static_cast<int>(g), b, (*probs)[g].data() + at);
    }
  });
  return comm_->AgreeOn(FirstError(status));
}

// The AUC of examples of one class is undefined (ExactAuc's NaN): says why, once a job.
void Evaluator::NoteOneClass(const std::vector<float>& labels) {
  if (noted_one_class_) return;
  noted_one_class_ = true;
  const bool clicks = labels.front() > 0.5f;
  fmt::print("{}: note: the eval AUC is undefined: all {} eval examples are {}\n", o_.program, labels.size(),
             clicks ? "clicks (label 1)" : "non-clicks (label 0)");
}

Status Evaluator::Evaluate(EvalResult* out, bool keep_predictions) {
  std::unique_ptr<PassPipeline> reader;
  STRATA_RETURN_IF_ERROR(PassPipeline::StartEvaluation(o_, plan_, comm_, server_, &reader));
  const size_t G = static_cast<size_t>(o_.workers_per_rank);
  std::vector<std::vector<float>> probs(G), labels(G);
  for (;;) {
    PassData pass = reader->Next();
    STRATA_RETURN_IF_ERROR(pass.error);
    if (pass.last) break;
    STRATA_RETURN_IF_ERROR(PredictPass(pass, &probs, &labels));
  }
  // A rank's part: its workers' probabilities in order, then their labels in the same order.
  std::string mine;
  for (const auto& v : probs) wire::PutBytes(&mine, v.data(), v.size() * sizeof(float));
  for (const auto& v : labels) wire::PutBytes(&mine, v.data(), v.size() * sizeof(float));
  std::vector<std::string> all;
  STRATA_RETURN_IF_ERROR(comm_->AllGather(mine, &all));
  std::vector<float> p, y;
  for (const std::string& part : all) {
    const size_t n = part.size() / (2 * sizeof(float)), at = p.size();
    wire::Reader in(part);
    p.resize(at + n);
    y.resize(at + n);
    std::memcpy(&p[at], in.Take(n * sizeof(float)), n * sizeof(float));
    std::memcpy(&y[at], in.Take(n * sizeof(float)), n * sizeof(float));
  }
  // Every rank gathered the same predictions, so every rank stops here alike.
  if (p.empty()) return NoExamplesIn(plan_);
  if (std::any_of(p.begin(), p.end(), [](float v) { return !std::isfinite(v); })) {
    return Status::InvalidArgument("evaluation predicted non-finite probabilities: the model diverged "
                                   "(lower --lr-dense or --lr-sparse)");
  }
  out->examples = static_cast<int64_t>(p.size());
  out->auc = ExactAuc(p.data(), y.data(), p.size());
  if (std::isnan(out->auc) && comm_->rank() == 0) NoteOneClass(y);
  out->logloss = LogLoss(p.data(), y.data(), p.size());
  if (keep_predictions) {
    out->probabilities = std::move(p);
    out->labels = std::move(y);
  }
  return Status::OK();
}

}  // namespace strata
