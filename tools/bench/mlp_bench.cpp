// mlp_bench: forward + backward throughput of the host Mlp against the machine's own GEMM
// limit, measured side by side in one run. For each thread count it times a large square
// fp32 GEMM in OpenBLAS and in oneDNN (the Mlp's library), takes the faster as the rate a
// perfect MLP would run at, and times the Mlp's Forward + LossAndGrad + Backward on one
// batch (medians of --reps); then prints examples/s, the model's FLOPs per example, the
// ceiling (GEMM rate / FLOPs per example) and the ratio to it.
//
// With --precision bf16 the Mlp computes its products with bf16 operands (the ceiling
// stays the fp32 GEMM's).
//
//   build/bench/mlp_bench [--batch 4096] [--mlp 512,256,128] [--threads 1,2] [--reps 7]
//                         [--precision fp32|bf16]
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cxxopts.hpp>
#include <string>
#include <vector>

#include "model/onednn_gemm.h"
#include "strata/common/partition.h"
#include "strata/model/gemm.h"
#include "strata/model/mlp.h"

namespace {

using Clock = std::chrono::steady_clock;

template <typename F>
double MedianSeconds(int reps, F&& body) {
  body();  // warm-up: page in buffers, start BLAS threads
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto start = Clock::now();
    body();
    t.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void FillRandom(uint64_t seed, std::vector<float>* v, float lo, float hi) {
  for (size_t k = 0; k < v->size(); ++k) {
    float u = static_cast<float>(strata::Mix64(seed + k) >> 40) * 0x1.0p-24f;
    (*v)[k] = lo + (hi - lo) * u;
  }
}

// GFLOP/s of a 2048^3 fp32 product through OpenBLAS and through oneDNN (strata::Gemm).
struct GemmRates {
  double openblas, onednn;
};

GemmRates SquareGemmGflops(int reps, int threads) {
  const int n = 2048;
  std::vector<float> a(static_cast<size_t>(n) * n), b(a.size()), c(a.size());
  FillRandom(1, &a, -1, 1);
  FillRandom(2, &b, -1, 1);
  const double flops = 2.0 * n * n * static_cast<double>(n);
  openblas_set_num_threads(threads);
  const double blas = MedianSeconds(reps, [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(),
                n, 0.0f, c.data(), n);
  });
  strata::GemmContext ctx;
  ctx.threads = threads;
  const double onednn = MedianSeconds(reps, [&] {
    strata::Gemm(strata::DensePrecision::kFp32, &ctx, false, false, n, n, n, a.data(), b.data(), false, c.data());
  });
  return {flops / blas / 1e9, flops / onednn / 1e9};
}

}  // namespace

int main(int argc, char** argv) {
  cxxopts::Options opts("mlp_bench", "Host MLP forward+backward throughput vs the SGEMM ceiling");
  opts.add_options()
      ("batch", "examples per batch", cxxopts::value<int>()->default_value("4096"))
      ("mlp", "hidden widths", cxxopts::value<std::vector<int>>()->default_value("512,256,128"))
      ("threads", "thread counts to try",
       cxxopts::value<std::vector<int>>()->default_value("1,2"))
      ("reps", "timed repetitions (median reported)", cxxopts::value<int>()->default_value("7"))
      ("precision", "fp32 or bf16 (the CPU must have bf16 instructions)",
       cxxopts::value<std::string>()->default_value("fp32"))
      ("h,help", "print this help");
  cxxopts::ParseResult args;
  try {
    args = opts.parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mlp_bench: %s\n", e.what());
    return 2;
  }
  if (args.count("help")) {
    std::printf("%s\n", opts.help().c_str());
    return 0;
  }
  const int B = args["batch"].as<int>();
  const int reps = args["reps"].as<int>();
  if (B < 1 || reps < 1) {
    std::fprintf(stderr, "mlp_bench: --batch and --reps must be >= 1\n");
    return 2;
  }
  const std::string word = args["precision"].as<std::string>();
  const bool bf16 = word == "bf16";
  if ((!bf16 && word != "fp32") || (bf16 && !strata::OnednnGemm::Bf16Supported())) {
    std::fprintf(stderr, "mlp_bench: --precision %s: fp32, or bf16 on a CPU with bf16 instructions\n", word.c_str());
    return 2;
  }
  const auto precision = bf16 ? strata::DensePrecision::kBf16 : strata::DensePrecision::kFp32;
  strata::ModelSpec spec;  // Criteo shape: 26 slots x dim 16 + 13 dense
  spec.mlp = args["mlp"].as<std::vector<int>>();
  const strata::Mlp mlp(spec);

  std::vector<float> params(mlp.num_params()), dparams(params.size());
  mlp.InitParams(spec.seed, params.data());
  std::vector<float> input(static_cast<size_t>(B) * mlp.input_width()), dinput(input.size());
  FillRandom(3, &input, -1, 1);
  std::vector<float> labels(B), logits(B);
  for (int i = 0; i < B; ++i) labels[i] = (strata::Mix64(i) & 1) ? 1.0f : 0.0f;

  const double flops = mlp.flops_per_example();
  std::printf("mlp %d", mlp.input_width());
  for (int w : spec.mlp) std::printf("-%d", w);
  std::printf("-1, batch %d, %zu params, %.3f MFLOP/example (fwd+bwd)\n", B, mlp.num_params(),
              flops / 1e6);
  for (int threads : args["threads"].as<std::vector<int>>()) {
    const GemmRates rates = SquareGemmGflops(reps, threads);
    const double gflops = std::max(rates.openblas, rates.onednn);
    auto ws = mlp.MakeWorkspace(B, threads);
    const double sec = MedianSeconds(reps, [&] {
      mlp.Forward(params.data(), input.data(), B, &ws, logits.data(), precision);
      strata::LossAndGrad(logits.data(), labels.data(), B, 1.0f / B, logits.data());
      mlp.Backward(params.data(), input.data(), B, logits.data(), &ws, dparams.data(), dinput.data(), precision);
    });
    const double eps = B / sec;
    const double ceiling = gflops * 1e9 / flops;
    std::printf("threads %d: gemm %.1f GFLOP/s (openblas %.1f, onednn %.1f) | mlp %.2f ms/batch, "
                "%.0f examples/s, %.1f GFLOP/s | ceiling %.0f examples/s | ratio %.3f\n",
                threads, gflops, rates.openblas, rates.onednn, sec * 1e3, eps, eps * flops / 1e9, ceiling,
                eps / ceiling);
  }
  return 0;
}
