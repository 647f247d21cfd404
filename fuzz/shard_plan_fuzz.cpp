// libFuzzer target: the shard-plan codec (the plan rank 0 broadcasts). Arbitrary bytes must
// decode or be refused with an error, never crash; a plan that decodes must encode back to
// the same bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "strata/data/shard_plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  strata::ShardPlan plan;
  if (!strata::ShardPlan::Deserialize(bytes, &plan).ok()) return 0;
  strata::ShardPlan again;
  if (!strata::ShardPlan::Deserialize(plan.Serialize(), &again).ok() || again.Serialize() != plan.Serialize()) {
    __builtin_trap();
  }
  return 0;
}
