// Delta exports: base + deltas folded in order equal the full checkpoint of the same pass;
// a delta applied to the wrong base is refused. Also writes the sample checkpoints that
// strata-inspect's end-to-end test runs on (into $STRATA_CKPT_SAMPLE_DIR when set).
#include <doctest/doctest.h>

#include <cstdlib>

#include "ckpt_test_util.h"
#include "strata/ckpt/fold.h"
#include "strata/ckpt/verify.h"

namespace strata {
namespace {

using namespace ckpt_test;

TEST_CASE("ckpt: base plus delta folds to the full checkpoint of the same pass") {
  TempDir tmp;
  const Job job = WriteTwoPassScenario(tmp.path());
  const std::string base = tmp.path() + "/ckpt/" + ckpt::CheckpointName(1);
  const std::string full = tmp.path() + "/ckpt/" + ckpt::CheckpointName(2);
  const std::string delta = tmp.path() + "/deltas/" + ckpt::DeltaName(1);

  ckpt::CheckpointMeta dm;
  REQUIRE(ckpt::ReadMeta(delta, &dm).ok());
  CHECK(dm.kind == ckpt::Kind::kDelta);
  CHECK(dm.rank_files[0].rows + dm.rank_files[1].rows == 1000 + 500);  // only the rows pass 2 touched

  ckpt::LoadedModel model;
  REQUIRE(ckpt::LoadModel(base, &model).ok());
  ckpt::ModelDiff before;
  REQUIRE(ckpt::DiffModel(model, full, &before).ok());
  CHECK(before.added == 500);
  CHECK(before.changed == 1000);
  CHECK(before.removed == 0);
  CHECK(before.dense_differs);
  CHECK_FALSE(before.identical());

  REQUIRE(ckpt::ApplyDelta(delta, &model).ok());
  CHECK(model.size() == job.rows.size());
  ckpt::ModelDiff after;
  REQUIRE(ckpt::DiffModel(model, full, &after).ok());
  CHECK(after.identical());
  CHECK(after.same == job.rows.size());

  // The same delta again no longer follows the model (pass 2, delta base 1).
  const Status st = ckpt::ApplyDelta(delta, &model);
  CHECK(st.code() == Status::Code::kInvalidArgument);
  CHECK(st.message().find("applies on top of pass 1, the model is at pass 2") != std::string::npos);
}

TEST_CASE("ckpt: sample checkpoints for strata-inspect") {
  const char* out = std::getenv("STRATA_CKPT_SAMPLE_DIR");
  TempDir tmp;
  const std::string root = out ? out : tmp.path();
  WriteTwoPassScenario(root);
  ckpt::VerifyReport report;
  const Status st = ckpt::VerifyCheckpoint(root + "/ckpt/" + ckpt::CheckpointName(2), &report);
  CHECK_MESSAGE(st.ok(), st.ToString());
  CHECK(report.rows == 3500);
  CHECK(report.rank_files == 2);
}

}  // namespace
}  // namespace strata
