// MemoryPlan (train/memory_plan.h): the sample of keys, the items, and the check.
#include "train/memory_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "strata/ckpt/checkpoint.h"
#include "strata/mem/mem_ps.h"
#include "strata/model/dense_model.h"
#include "strata/model/optimizer.h"
#include "strata/ssd/ssd_format.h"
#include "strata/ssd/ssd_store.h"
#include "train/pass_reader.h"

namespace strata {
namespace {

// DRAM a row costs beyond its bytes in each structure that holds one, from their layouts:
constexpr double kStoreRowOverhead = 21;  // the all-in-DRAM store: arena, handle index (1.15x at 136 B)
constexpr double kTableRowOverhead = 32;  // an HBM-PS host table: key, 8-byte slots at 1/4 to 1/2 load
constexpr double kGpuTableRowOverhead = 36;  // a GPU table: 2 to 4 slots a row of key and row index
constexpr double kAdmissionBytesPerKey = 26;  // 13 bytes a pending key at load 0.375-0.75 (ps/admission.h)
constexpr double kWrittenFilterBytesPerKey = 1.6;  // the MEM-PS filter of keys written to the SSD-PS
constexpr double kKeyBytes = sizeof(uint64_t);

double Sum(const std::vector<MemoryPlan::Item>& items) {
  double s = 0;
  for (const auto& i : items) s += i.bytes;
  return s;
}

// What a pass's batches hold: labels, dense values, keys and their offsets.
double BatchBytes(const PassData& pass) {
  double bytes = 0;
  for (const auto& worker : pass.batches) {
    for (const Batch& b : worker) {
      bytes += sizeof(float) * (b.labels.size() + b.dense.size()) + sizeof(uint64_t) * b.keys.size() +
               sizeof(uint32_t) * b.offsets.size();
    }
  }
  return bytes;
}

}  // namespace

double DenseModelBytes(const TrainOptions& o, int workers) {
  const DenseModel model(o.model);
  const Mlp& mlp = model.mlp();
  double activations = 2.0 * o.batch_size * mlp.input_width();
  for (int l = 0; l < mlp.num_layers(); ++l) activations += 2.0 * o.batch_size * mlp.fan_out(l);
  // dcn: each cross layer keeps its output and its pre-gate product, plus two gradients;
  // dlrm and wdl: the MLP's input is built apart from the pooled row, with its gradient.
  if (o.model.kind == ModelKind::kDcn) activations += (2.0 * o.model.cross_layers + 2.0) * o.batch_size * mlp.input_width();
  if (o.model.kind == ModelKind::kDlrm || o.model.kind == ModelKind::kWdl) activations += 2.0 * o.batch_size * mlp.input_width();
  return 4.0 * ((4.0 + workers) * static_cast<double>(model.num_params()) + workers * activations);
}

// With more epochs than one, a second pass in the next epoch repeats the first's keys: no
// new keys, as the end of the input would say.
Status SampleKeys(const TrainOptions& o, const ShardPlan& plan, Comm* comm, KeySample* out, ReadAhead* ahead) {
  auto reader = std::make_unique<PassReader>(o, plan, comm->rank());
  STRATA_RETURN_IF_ERROR(comm->AgreeOn(reader->Open(ReadPosition{})));
  PassData first, second;
  reader->Read(comm, &first);
  STRATA_RETURN_IF_ERROR(first.error);
  if (!first.last) reader->Read(comm, &second);
  STRATA_RETURN_IF_ERROR(second.error);
  out->pass_keys = first.keys.size();
  out->pass_batch_bytes = BatchBytes(first);
  out->read_ahead_bytes = out->pass_batch_bytes + BatchBytes(second) + kKeyBytes * (first.keys.size() + second.keys.size());
  std::vector<uint64_t> fresh;
  std::set_difference(second.keys.begin(), second.keys.end(), first.keys.begin(), first.keys.end(),
                      std::back_inserter(fresh));
  out->new_keys = fresh.size();
  ahead->reader = std::move(reader);
  const bool ended = first.last;
  ahead->passes.push_back(std::move(first));
  if (!ended) ahead->passes.push_back(std::move(second));
  const uint64_t lines = plan.total_lines();
  const uint64_t per_pass = static_cast<uint64_t>(std::max<int64_t>(1, o.pass_examples));
  out->epoch_passes = std::max<uint64_t>(1, (lines + per_pass - 1) / per_pass);
  return Status::OK();
}

double MemoryPlan::Total(const std::vector<Item>& items) const { return Sum(items); }

MemoryPlan PlanMemory(const TrainOptions& o, const KeySample& keys, int64_t base_rss, bool gpu) {
  const RowLayout stored = RowLayoutOf(o.model);
  const double rb = static_cast<double>(stored.bytes());
  const double cb = static_cast<double>(RowLayout(stored.dim, stored.state_floats).bytes());  // the HBM-PS computes in f32
  const double pass = static_cast<double>(keys.pass_keys), model = static_cast<double>(keys.model_keys());
  const bool cached = o.mem_cache_gb > 0;
  MemoryPlan p;
  p.dram.push_back({"process at start (libraries, MPI, input plan)", static_cast<double>(base_rss), ""});
  p.dram.push_back({"dense model, optimizer and activations", DenseModelBytes(o, o.workers_per_rank), "--mlp"});
  if (cached) {
    const double budget = o.mem_cache_gb * 1e9;
    p.dram.push_back({"MEM-PS cache", std::min(budget, model * (rb + kMemPsRowOverheadBytes)), "--mem-cache-gb"});
    // The SSD-PS's index with as many threads as a rank alone on its node would get.
    const double index = SsdIndexPeakBytesPerKey(ThreadsOfRank(o, 1));
    p.dram.push_back({"SSD-PS index and the MEM-PS's filter", model * (index + kWrittenFilterBytesPerKey), ""});
    p.dram.push_back({"SSD-PS write buffers", static_cast<double>(SsdOptions().write_buffer_total()), ""});
    p.dram.push_back({"MEM-PS eviction batch", static_cast<double>(MemPsOptions().eviction_batch_rows()) * (rb + sizeof(uint64_t) + 1), ""});
    const double records = model * (rb + ssd::kRecordOverhead);
    p.disk.push_back({"SSD-PS (at most 2x live rows + one segment)", 2 * records + o.ssd_segment_mb * (1 << 20), "--ssd-dir"});
  } else {
    p.dram.push_back({"every row in DRAM", model * (rb + kStoreRowOverhead), "--mem-cache-gb"});
  }
  if (o.model.admit_min_count > 0) {  // every key seen counts there until admitted (the rows above overestimate)
    p.dram.push_back({"admission ledger (pending keys)", model * kAdmissionBytesPerKey, "--admit-min-count"});
  }
  if (gpu) {  // a GPU's share: each of the rank's workers holds a shard of the pass's keys
    const double shard = pass / std::max(1, o.workers_per_rank);
    p.hbm.push_back({"pass tables (training and staged)", 2 * shard * (cb + kGpuTableRowOverhead), "--pass-examples"});
    p.hbm.push_back({"dense model, optimizer and activations", DenseModelBytes(o, 1), "--mlp"});
  } else {
    p.dram.push_back({"pass tables (training and staged)", 2 * pass * (cb + kTableRowOverhead), "--pass-examples"});
  }
  p.dram.push_back({"passes pulled ahead", o.prefetch_passes * pass * (rb + kKeyBytes + 1), "--prefetch-passes"});
  // The pass training, the one pulled ahead and the one the Read stage holds, as batches.
  p.dram.push_back({"passes read ahead (batches)", (o.prefetch_passes + 2) * keys.pass_batch_bytes, "--pass-examples"});
  // Rows on the wire at pass end, and without a MEM-PS the write-back buffer.
  p.dram.push_back({"exchange and write-back buffers", (cached ? 1 : 2) * pass * (rb + kKeyBytes), "--pass-examples"});
  if (!o.checkpoint_dir.empty() || !o.init_from.empty()) {  // writing or reading rank files
    p.dram.push_back({"checkpoint batches (a rank file written or read)",
                      static_cast<double>(ckpt::RankFileBufferBytes(stored, keys.model_keys())), ""});
  }
  if (!o.checkpoint_dir.empty()) {
    p.disk.push_back({fmt::format("checkpoints (--keep-checkpoints {})", o.keep_checkpoints),
                      o.keep_checkpoints * model * (rb + kKeyBytes), "--keep-checkpoints"});
  }
  return p;
}

std::string FormatPlan(const MemoryPlan& plan, const KeySample& keys, double dram_have, double hbm_have) {
  std::ostringstream s;
  s << fmt::format("memory plan of a rank: {} keys a pass, about {} in the model ({} passes an epoch)\n",
                   keys.pass_keys, keys.model_keys(), keys.epoch_passes);
  auto section = [&](const char* name, const std::vector<MemoryPlan::Item>& items, const std::string& tail) {
    if (items.empty()) return;
    s << fmt::format("  {:<5} {:>9.3f} GB{}\n", name, plan.Total(items) / 1e9, tail);
    for (const auto& i : items) s << fmt::format("        {:>9.3f} GB  {}\n", i.bytes / 1e9, i.what);
  };
  section("HBM", plan.hbm, hbm_have > 0 ? fmt::format(" a GPU, of {:.3f} GB free", hbm_have / 1e9) : " a GPU");
  section("DRAM", plan.dram, dram_have > 0 ? fmt::format(" of {:.3f} GB available", dram_have / 1e9) : "");
  section("disk", plan.disk, "");
  return s.str();
}

namespace {

// OK when items fit in have (or have is unknown); else the usage error for `of`.
Status CheckFits(const std::vector<MemoryPlan::Item>& items, double have, const char* of) {
  const double need = Sum(items);
  if (have <= 0 || need <= have) return Status::OK();
  const MemoryPlan::Item* largest = nullptr;
  for (const auto& i : items) {
    if (!i.flag.empty() && (!largest || i.bytes > largest->bytes)) largest = &i;
  }
  return Status::Usage(fmt::format(
      "the memory plan needs {:.2f} GB of {}, more than the {:.2f} GB available; its largest part is "
      "{} ({:.2f} GB): lower {} (run with --dry-run to see the whole plan)",
      need / 1e9, of, have / 1e9, largest->what, largest->bytes / 1e9, largest->flag));
}

}  // namespace

Status CheckPlanFits(const MemoryPlan& plan, double dram_have, double hbm_have) {
  STRATA_RETURN_IF_ERROR(CheckFits(plan.hbm, hbm_have, "HBM a GPU"));
  return CheckFits(plan.dram, dram_have, "DRAM a rank");
}

}  // namespace strata
