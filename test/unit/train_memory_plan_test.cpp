// MemoryPlan: the items a configuration brings, the key estimate, and the refusal naming
// the flag of the largest part.
#include <doctest/doctest.h>

#include "strata/mem/mem_ps.h"
#include "strata/model/optimizer.h"
#include "train/memory_plan.h"

namespace strata {
namespace {

const MemoryPlan::Item* Find(const std::vector<MemoryPlan::Item>& items, const std::string& prefix) {
  for (const auto& i : items) {
    if (i.what.rfind(prefix, 0) == 0) return &i;
  }
  return nullptr;
}

TrainOptions Options() {
  TrainOptions o;
  o.model.embedding_dim = 16;
  o.model.mlp = {64, 32};
  o.pass_examples = 10000;
  return o;
}

TEST_CASE("memory plan: the model grows by the second pass's new keys every further pass") {
  KeySample k;
  k.pass_keys = 1000;
  k.new_keys = 300;
  k.epoch_passes = 11;
  CHECK(k.model_keys() == 1000 + 300 * 10);
}

TEST_CASE("memory plan: every row in DRAM, or a capped cache over the SSD-PS with its index and disk") {
  TrainOptions o = Options();
  const double rb = static_cast<double>(RowLayoutOf(o.model).bytes());
  KeySample k;
  k.pass_keys = 1000;
  k.new_keys = 1000;
  k.epoch_passes = 100;
  MemoryPlan dram = PlanMemory(o, k, 1 << 20, false);
  REQUIRE(Find(dram.dram, "every row") != nullptr);
  CHECK(Find(dram.dram, "every row")->bytes >= 100000 * rb);
  CHECK(dram.disk.empty());
  k.pass_batch_bytes = 1e6;  // the pass training, the one pulled ahead, the one being read
  CHECK(Find(PlanMemory(o, k, 1 << 20, false).dram, "passes read ahead")->bytes == doctest::Approx(3e6));
  CHECK(dram.hbm.empty());

  o.mem_cache_gb = 1;  // more than the model needs: the cache holds the model, no more
  MemoryPlan cached = PlanMemory(o, k, 1 << 20, false);
  CHECK(Find(cached.dram, "MEM-PS cache")->bytes == doctest::Approx(100000 * (rb + kMemPsRowOverheadBytes)));
  CHECK(Find(cached.dram, "SSD-PS index") != nullptr);
  CHECK(Find(cached.disk, "SSD-PS")->bytes > 2 * 100000 * rb);
  o.mem_cache_gb = 0.001;
  CHECK(Find(PlanMemory(o, k, 1 << 20, false).dram, "MEM-PS cache")->bytes == doctest::Approx(1e6));

  o.workers_per_rank = 2;
  MemoryPlan gpu = PlanMemory(o, k, 1 << 20, true);  // the pass tables move to HBM, a shard a GPU
  REQUIRE(Find(gpu.hbm, "pass tables") != nullptr);
  CHECK(Find(gpu.hbm, "pass tables")->bytes < 2 * 1000 * (rb + 64));
  CHECK(Find(gpu.dram, "pass tables") == nullptr);
  const Status st = CheckPlanFits(gpu, 1e12, 1e4);  // a GPU with 10 kB free
  CHECK(st.code() == Status::Code::kUsage);
  CHECK(st.message().find("HBM a GPU") != std::string::npos);
  CHECK(CheckPlanFits(gpu, 1e12, 0).ok());  // free memory unknown: no refusal
}

TEST_CASE("memory plan: a plan over the limit is a usage error naming the flag of its largest part") {
  TrainOptions o = Options();
  KeySample k;
  k.pass_keys = 1000000;
  k.new_keys = 10;
  k.epoch_passes = 2;
  o.mem_cache_gb = 0.01;  // pass tables dominate
  MemoryPlan p = PlanMemory(o, k, 1 << 20, false);
  CHECK(CheckPlanFits(p, 1e12, 0).ok());
  Status st = CheckPlanFits(p, 1e8, 0);
  CHECK(st.code() == Status::Code::kUsage);
  CHECK(st.message().find("--pass-examples") != std::string::npos);

  o.mem_cache_gb = 0;  // every row in DRAM dominates a long run
  k.pass_keys = 1000;
  k.new_keys = 1000;
  k.epoch_passes = 100000;
  st = CheckPlanFits(PlanMemory(o, k, 1 << 20, false), 1e8, 0);
  CHECK(st.message().find("--mem-cache-gb") != std::string::npos);
  CHECK(FormatPlan(p, k, 1e8, 0).find("DRAM") != std::string::npos);
}

}  // namespace
}  // namespace strata
