// strata-inspect diff and fold: comparing two models, and base + deltas against a full
// checkpoint.
#include <cstdio>

#include "inspect.h"
#include "strata/ckpt/checkpoint.h"
#include "strata/ckpt/fold.h"

namespace strata::inspect {
namespace {

void PrintDiff(const ckpt::ModelDiff& d) {
  std::printf("rows         %llu added, %llu removed, %llu changed, %llu same; max abs difference %.9g\n",
              static_cast<unsigned long long>(d.added), static_cast<unsigned long long>(d.removed),
              static_cast<unsigned long long>(d.changed), static_cast<unsigned long long>(d.same), d.max_abs_diff);
  std::printf("dense        %s; max abs difference %.9g; optimizer steps %lld vs %lld\n",
              d.dense_shape_differs ? "shapes differ" : d.dense_differs ? "differs" : "identical", d.dense_max_diff,
              static_cast<long long>(d.dense_steps_a), static_cast<long long>(d.dense_steps_b));
  std::printf("pass         %lld vs %lld\n", static_cast<long long>(d.pass_a), static_cast<long long>(d.pass_b));
  std::printf("identical    %s\n", d.identical() ? "yes" : "no");
}

Status Load(const std::string& arg, ckpt::LoadedModel* model) {
  std::string path;
  STRATA_RETURN_IF_ERROR(ckpt::ResolveCheckpoint(arg, &path));
  return ckpt::LoadModel(path, model);
}

}  // namespace

Status Diff(const Args& args) {
  ckpt::LoadedModel a;
  std::string b;
  STRATA_RETURN_IF_ERROR(Load(args.positional[0], &a));
  STRATA_RETURN_IF_ERROR(ckpt::ResolveCheckpoint(args.positional[1], &b));
  ckpt::ModelDiff diff;
  STRATA_RETURN_IF_ERROR(ckpt::DiffModel(a, b, &diff));
  PrintDiff(diff);
  return Status::OK();
}

Status Fold(const Args& args) {
  ckpt::LoadedModel model;
  STRATA_RETURN_IF_ERROR(Load(args.positional[0], &model));
  if (model.meta().kind != ckpt::Kind::kFull) {
    return Status::InvalidArgument(args.positional[0] + ": the base must be a full checkpoint, not a delta");
  }
  for (size_t i = 1; i < args.positional.size(); ++i) {
    std::string delta;
    STRATA_RETURN_IF_ERROR(ckpt::ResolveCheckpoint(args.positional[i], &delta));
    STRATA_RETURN_IF_ERROR(ckpt::ApplyDelta(delta, &model));
    std::printf("applied      %s: now pass %lld, %zu rows\n", delta.c_str(),
                static_cast<long long>(model.meta().progress.pass), model.size());
  }
  if (!args.options.count("check")) return Status::OK();
  std::string check;
  STRATA_RETURN_IF_ERROR(ckpt::ResolveCheckpoint(args.options.at("check"), &check));
  ckpt::ModelDiff diff;
  STRATA_RETURN_IF_ERROR(ckpt::DiffModel(model, check, &diff));
  PrintDiff(diff);
  if (!diff.identical()) return Status::Corruption("base + deltas differ from " + check);
  std::printf("OK           base + %zu deltas equal %s\n", args.positional.size() - 1, check.c_str());
  return Status::OK();
}

}  // namespace strata::inspect
