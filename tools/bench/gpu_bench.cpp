// gpu_bench: the GPU hash table's bulk insert, find and accumulate throughput, in keys/s and
// (find, accumulate) as effective GB/s against the GPU's own device-to-device copy bandwidth
// measured in the same run (the way nccl-tests reports bus bandwidth). --dim floats a value
// (8 by default, as HierarchicalKV's published find rates). Medians of --runs runs.
// In a build without CUDA it says so and exits 77 (skipped).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#ifdef STRATA_WITH_CUDA
#include "../../cuda/table_bench.h"
#endif

int main(int argc, char** argv) {
#ifndef STRATA_WITH_CUDA
  (void)argc;
  (void)argv;
  std::printf("gpu_bench: built without CUDA: skipping\n");
  return 77;
#else
  size_t keys = 1u << 26;
  int value_floats = 8, rounds = 5, runs = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const long long v = std::atoll(argv[i + 1]);
    if (flag == "--keys") keys = static_cast<size_t>(v);
    else if (flag == "--dim") value_floats = static_cast<int>(v);
    else if (flag == "--rounds") rounds = static_cast<int>(v);
    else if (flag == "--runs") runs = static_cast<int>(v);
    else {
      std::fprintf(stderr, "gpu_bench: unknown flag %s (--keys --dim --rounds --runs)\n", flag.c_str());
      return 2;
    }
  }
  std::vector<strata::gpu::TableBenchResult> results;
  for (int r = 0; r < runs; ++r) {
    strata::gpu::TableBenchResult res;
    strata::Status st = strata::gpu::RunTableBench(keys, value_floats, rounds, 1234 + r, &res);
    if (!st.ok()) {
      std::fprintf(stderr, "gpu_bench: %s\n", st.ToString().c_str());
      return 1;
    }
    results.push_back(res);
  }
  auto median = [&](double strata::gpu::TableBenchResult::*field) {
    std::vector<double> v;
    for (const auto& r : results) v.push_back(r.*field);
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double copy = median(&strata::gpu::TableBenchResult::copy_gbps);
  const double insert = median(&strata::gpu::TableBenchResult::insert_keys_per_s);
  const double find = median(&strata::gpu::TableBenchResult::find_keys_per_s);
  const double acc = median(&strata::gpu::TableBenchResult::accumulate_keys_per_s);
  const double find_gbps = median(&strata::gpu::TableBenchResult::find_gbps);
  const double acc_gbps = median(&strata::gpu::TableBenchResult::accumulate_gbps);
  std::printf("gpu hash table: %zu keys, %d floats per value, median of %d runs; copy bandwidth %.1f GB/s\n", keys,
              value_floats, runs, copy);
  std::printf("  insert      %.3g keys/s\n", insert);
  std::printf("  find        %.3g keys/s  %.1f GB/s  (%.2f of copy bandwidth)\n", find, find_gbps, find_gbps / copy);
  std::printf("  accumulate  %.3g keys/s  %.1f GB/s  (%.2f of copy bandwidth)\n", acc, acc_gbps, acc_gbps / copy);
  std::printf("gpu_bench: dim=%d insert_keys_per_s=%.4g find_keys_per_s=%.4g accumulate_keys_per_s=%.4g copy_gbps=%.1f\n",
              value_floats, insert, find, acc, copy);
  return 0;
#endif
}
