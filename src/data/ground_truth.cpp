// The hidden model: hash-derived weights, their fade over the Zipf tail, the logit of a
// row, and the calibration of its scales and bias.
#include "data/ground_truth.h"

#include <algorithm>
#include <cmath>

#include "data/dense_table.h"
#include "strata/common/partition.h"

namespace strata::data_internal {
namespace {

// Standard deviations of the logit's parts after calibration. With the default options
// they put the oracle AUC near 0.82, and keep the signal learnable in one epoch: a model
// with 16-wide embeddings and an MLP (512-256-128, Adagrad/Adam, batch 1024) gets within
// about 0.015 AUC of the oracle.
constexpr double kMainStd = 1.45;
constexpr double kPairStd = 0.37;
constexpr double kDenseStd = 0.35;
constexpr int kMaxPairs = 4;
constexpr int kPairRank = 4;           // width of the interaction vectors u
constexpr double kHeadRanks = 30.0;    // token effects keep full weight up to this rank,
constexpr double kPairHeadRanks = 10.0;  // interaction vectors up to this one

// Token effects fade as 1/rank past the head, interactions as rank^-1.5: the tail a model
// sees too rarely to learn carries little of the signal.
double MainDecay(uint64_t rank) {
  double r = static_cast<double>(rank);
  return r <= kHeadRanks ? 1.0 : kHeadRanks / r;
}
double PairDecay(uint64_t rank) {
  double r = static_cast<double>(rank);
  return r <= kPairHeadRanks ? 1.0 : std::pow(kPairHeadRanks / r, 1.5);
}

// Bijective 32-bit mixer (murmur3's finalizer).
uint32_t Fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bU;
  h ^= h >> 13;
  h *= 0xc2b2ae35U;
  return h ^ (h >> 16);
}

// Roughly standard normal from 64 hash bits: the sum of four 16-bit uniforms, rescaled.
double Gauss(uint64_t h) {
  double sum = static_cast<double>((h & 0xffff) + ((h >> 16) & 0xffff) + ((h >> 32) & 0xffff) + (h >> 48));
  constexpr double kMean = 4 * 65535.0 / 2;
  const double kStd = std::sqrt(4 * (65536.0 * 65536.0 - 1) / 12);
  return (sum - kMean) / kStd;
}

double Unit(uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

double Sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }

// Scale giving values (one part of each sample row) the standard deviation `target`.
template <typename Get>
double ScaleTo(const std::vector<LogitParts>& sample, Get get, double target) {
  double sum = 0, sum_sq = 0;
  for (const LogitParts& p : sample) {
    sum += get(p);
    sum_sq += get(p) * get(p);
  }
  double n = static_cast<double>(sample.size());
  double var = sum_sq / n - (sum / n) * (sum / n);
  return var > 1e-12 ? target / std::sqrt(var) : 0.0;
}

}  // namespace

GroundTruth::GroundTruth(const SyntheticOptions& options)
    : options_(options), token_digits_(options.cardinality <= (uint64_t{1} << 32) ? 8 : 16) {
  const uint64_t seed = Mix64(options.seed ^ 0x6a09e667f3bcc909ULL);
  for (int s = 0; s < options.num_slots; ++s) {
    uint64_t salt = Mix64(seed + static_cast<uint64_t>(s));
    slot_salt_.push_back(salt);
    slot_weight_.push_back(0.25 + 0.75 * Unit(Mix64(salt)));  // some slots matter more
  }
  int pairs = std::min(kMaxPairs, options.num_slots / 2);
  for (int i = 0; i < pairs; ++i) {
    uint64_t h = Mix64(seed ^ (0x100 + static_cast<uint64_t>(i)));
    uint64_t slots = static_cast<uint64_t>(options.num_slots);
    int a = static_cast<int>(h % slots);
    int b = static_cast<int>((static_cast<uint64_t>(a) + 1 + (h >> 32) % (slots - 1)) % slots);  // b != a
    pair_a_.push_back(a);
    pair_b_.push_back(b);
  }
  for (int j = 0; j < options.num_dense; ++j) {
    uint64_t h = Mix64(seed ^ (0x200 + static_cast<uint64_t>(j)));
    dense_scale_.push_back(std::floor(std::exp(Unit(h) * std::log(200.0))));  // 1 .. 200
    dense_coef_.push_back(Gauss(Mix64(h)));
  }
}

uint64_t GroundTruth::Token(int slot, uint64_t rank) const {
  uint64_t salt = slot_salt_[static_cast<size_t>(slot)];
  if (token_digits_ == 8) return Fmix32(static_cast<uint32_t>(rank - 1) ^ static_cast<uint32_t>(salt));
  return Mix64((rank - 1) ^ salt);
}

int64_t GroundTruth::DenseValue(int j, double u) const {
  double x = dense_scale_[static_cast<size_t>(j)] * (1.0 / u - 1.0);
  return static_cast<int64_t>(std::min(x, 1e12));
}

LogitParts GroundTruth::Parts(const SyntheticRow& row) const {
  LogitParts parts;
  for (size_t s = 0; s < row.ranks.size(); ++s) {
    uint64_t rank = row.ranks[s];
    if (rank == 0) continue;
    parts.main += slot_weight_[s] * MainDecay(rank) * Gauss(Mix64(slot_salt_[s] ^ rank));
  }
  for (size_t p = 0; p < pair_a_.size(); ++p) {
    uint64_t ra = row.ranks[static_cast<size_t>(pair_a_[p])];
    uint64_t rb = row.ranks[static_cast<size_t>(pair_b_[p])];
    if (ra == 0 || rb == 0) continue;
    uint64_t ha = Mix64(slot_salt_[static_cast<size_t>(pair_a_[p])] ^ ~ra);
    uint64_t hb = Mix64(slot_salt_[static_cast<size_t>(pair_b_[p])] ^ ~rb);
    double dot = 0;
    for (uint64_t d = 0; d < kPairRank; ++d) dot += Gauss(Mix64(ha + d)) * Gauss(Mix64(hb + d));
    parts.pair += PairDecay(ra) * PairDecay(rb) * dot;
  }
  for (size_t j = 0; j < row.ints.size(); ++j) {
    double t = row.int_empty[j] ? 0.0 : TransformDenseInt(row.ints[j]);
    parts.dense += dense_coef_[j] * (t - std::log1p(dense_scale_[j]));
  }
  return parts;
}

void GroundTruth::Calibrate(const std::vector<LogitParts>& sample, double ctr) {
  main_scale_ = ScaleTo(sample, [](const LogitParts& p) { return p.main; }, kMainStd);
  pair_scale_ = ScaleTo(sample, [](const LogitParts& p) { return p.pair; }, kPairStd);
  dense_scale_factor_ = ScaleTo(sample, [](const LogitParts& p) { return p.dense; }, kDenseStd);
  std::vector<double> logits;
  for (const LogitParts& p : sample) {
    logits.push_back(main_scale_ * p.main + pair_scale_ * p.pair + dense_scale_factor_ * p.dense);
  }
  double lo = -30, hi = 30;
  for (int it = 0; it < 100; ++it) {
    double mid = 0.5 * (lo + hi);
    double mean = 0;
    for (double z : logits) mean += Sigmoid(z + mid);
    (mean / static_cast<double>(logits.size()) < ctr ? lo : hi) = mid;
  }
  bias_ = 0.5 * (lo + hi);
}

double GroundTruth::Logit(const SyntheticRow& row) const {
  LogitParts p = Parts(row);
  return bias_ + main_scale_ * p.main + pair_scale_ * p.pair + dense_scale_factor_ * p.dense;
}

}  // namespace strata::data_internal
