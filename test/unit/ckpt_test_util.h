// Shared helpers for the checkpoint tests: a small model, per-rank in-memory stores filled
// with seeded rows, a dense state of the right shape, the full write-and-publish sequence a
// trainer runs, and a two-pass training scenario (checkpoints of passes 1 and 2 plus the
// delta between them) that the fold test and strata-inspect's end-to-end test share.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "strata/ckpt/checkpoint.h"
#include "strata/common/partition.h"
#include "strata/model/mlp.h"
#include "strata/store/row_store.h"
#include "ssd_test_util.h"

namespace strata::ckpt_test {

using ssd_test::TempDir;
using Rows = std::map<uint64_t, std::vector<uint8_t>>;

inline ModelSpec SmallSpec() {
  ModelSpec s;
  s.num_slots = 3;
  s.num_dense = 2;
  s.embedding_dim = 4;
  s.mlp = {8, 4};
  return s;
}

// One store per rank; rows go to the store of their owner.
struct Job {
  Job(const ModelSpec& spec, int ranks) : spec(spec), layout(RowLayoutOf(spec)) {
    for (int r = 0; r < ranks; ++r) stores.push_back(NewMemoryRowStore(layout.bytes()));
  }
  int ranks() const { return static_cast<int>(stores.size()); }

  // A seeded row for key, stamped with last_pass; distinct for every (key, seed).
  std::vector<uint8_t> MakeRow(uint64_t key, uint64_t seed, uint32_t last_pass) const {
    std::vector<uint8_t> row(layout.bytes());
    std::mt19937_64 rng(Mix64(key) ^ seed);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (size_t i = 0; i < layout.floats(); ++i) RowLayout::Embedding(row.data())[i] = u(rng);
    layout.SetFreq(row.data(), static_cast<uint32_t>(rng() % 1000));
    layout.SetLastPass(row.data(), last_pass);
    return row;
  }
  void Put(uint64_t key, const std::vector<uint8_t>& row) {
    REQUIRE(stores[OwnerRank(key, ranks())]->Put(&key, 1, row.data()).ok());
    rows[key] = row;
  }
  // Adds n rows with keys spread over the slots (key = SlotKey(slot, token)).
  void AddRows(uint64_t first_token, size_t n, uint64_t seed, uint32_t last_pass) {
    for (size_t i = 0; i < n; ++i) {
      const uint64_t key = SlotKey(static_cast<int>(i % spec.num_slots), first_token + i);
      Put(key, MakeRow(key, seed, last_pass));
    }
  }

  ModelSpec spec;
  RowLayout layout;
  std::vector<std::unique_ptr<RowStore>> stores;
  Rows rows;  // the model: every row of the job
};

// Meta of pass `pass` with a seeded Adam dense state of the spec's shape.
inline ckpt::CheckpointMeta MakeMeta(const Job& job, int64_t pass, uint64_t seed) {
  ckpt::CheckpointMeta m;
  m.flags = "--embedding-dim=4 --mlp=8,4 --seed=" + std::to_string(seed);
  m.train_input = "1 file, " + std::to_string(pass * 1000) + " lines, id 0123456789abcdef";
  m.model = job.spec;
  m.progress.pass = pass;
  m.progress.epoch = pass / 2;
  m.progress.examples = pass * 1000 + 7;
  m.progress.global_step = pass * 10 + 3;
  m.ranks = job.ranks();
  m.workers = 2 * job.ranks();
  for (int w = 0; w < m.workers; ++w) m.data_position.push_back(pass * 100 + w);
  const size_t p = Mlp(job.spec).num_params();
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::normal_distribution<float> g;
  for (size_t i = 0; i < p; ++i) {
    m.dense.params.push_back(g(rng));
    m.dense.m.push_back(g(rng));
    m.dense.v.push_back(std::fabs(g(rng)));
  }
  m.dense.steps = m.progress.global_step;
  return m;
}

// What a trainer does: every rank writes its rows, rank 0 writes meta and publishes.
// Rows with last_pass < min_last_pass are left out (deltas). Returns the published name.
inline std::string WriteAndPublish(Job& job, const std::string& dir, const std::string& name,
                                   ckpt::CheckpointMeta meta, uint32_t min_last_pass = 0, int keep = 0) {
  const std::string tmp = ckpt::TmpName(name);
  meta.rank_files.resize(job.ranks());
  for (int r = 0; r < job.ranks(); ++r) {
    REQUIRE(ckpt::WriteRankRows(dir + "/" + tmp, r, job.layout, *job.stores[r], min_last_pass, &meta.rank_files[r]).ok());
  }
  REQUIRE(ckpt::WriteMeta(dir + "/" + tmp, meta).ok());
  const Status st = ckpt::PublishCheckpoint(dir, tmp, name, keep);
  REQUIRE_MESSAGE(st.ok(), st.ToString());
  return name;
}

// Every row the checkpoint hands to `rank` of `ranks`, keyed; fails on a repeated key.
inline Rows LoadRows(const std::string& ckpt_path, int rank, int ranks) {
  ckpt::CheckpointMeta meta;
  REQUIRE(ckpt::ReadMeta(ckpt_path, &meta).ok());
  Rows out;
  const size_t bytes = RowLayoutOf(meta.model).bytes();
  const Status st = ckpt::LoadOwnedRows(ckpt_path, meta, rank, ranks, [&](const uint64_t* k, size_t n, const uint8_t* r) {
    for (size_t i = 0; i < n; ++i) {
      CHECK(OwnerRank(k[i], ranks) == rank);
      CHECK(out.emplace(k[i], std::vector<uint8_t>(r + i * bytes, r + (i + 1) * bytes)).second);
    }
    return Status::OK();
  });
  REQUIRE_MESSAGE(st.ok(), st.ToString());
  return out;
}

// Two passes of a 2-rank job under root: root/ckpt holds ckpt-00000001 and ckpt-00000002
// (LATEST names pass 2); root/deltas/delta-000001 holds the rows pass 2 touched (a third
// of the old rows rewritten, 500 new ones) and pass 2's dense state.
inline Job WriteTwoPassScenario(const std::string& root) {
  Job job(SmallSpec(), 2);
  job.AddRows(0, 3000, 1, 1);
  WriteAndPublish(job, root + "/ckpt", ckpt::CheckpointName(1), MakeMeta(job, 1, 11));
  for (uint64_t t = 0; t < 3000; t += 3) {
    const uint64_t key = SlotKey(static_cast<int>(t % job.spec.num_slots), t);
    job.Put(key, job.MakeRow(key, 2, 2));
  }
  job.AddRows(10000, 500, 2, 2);
  const ckpt::CheckpointMeta meta2 = MakeMeta(job, 2, 22);
  WriteAndPublish(job, root + "/ckpt", ckpt::CheckpointName(2), meta2);
  ckpt::CheckpointMeta delta = meta2;
  delta.kind = ckpt::Kind::kDelta;
  delta.base_pass = 1;
  delta.min_last_pass = 2;
  WriteAndPublish(job, root + "/deltas", ckpt::DeltaName(1), delta, 2);
  return job;
}

}  // namespace strata::ckpt_test
