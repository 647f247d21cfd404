// The hidden model: hash-derived weights, their tail fade, and the logit of a row.
#include "data/ground_truth.h"

#include <cmath>
#include <cstdlib>

#include "data/dense_table.h"
#include "strata/common/partition.h"

namespace strata::data_internal {
namespace {

// Target standard deviations of the logit's parts (before calibration's bias); together
// they put the oracle AUC near 0.8, close to what good models reach on real Criteo.
static double EnvOr(const char* n, double d) { const char* v = getenv(n); return v ? atof(v) : d; }
static const double kMainStd = EnvOr("XMAIN", 1.2);
static const double kPairStd = EnvOr("XPAIR", 0.6);
constexpr double kDenseStd = 0.35;
constexpr int kMaxPairs = 4;
static const int kPairRank = static_cast<int>(EnvOr("XRANK", 4));
static const double kHeadRanks = EnvOr("XHEAD", 100.0);
static const double kPairHeadRanks = EnvOr("XPHEAD", 100.0);
static double PairDecay(uint64_t rank) { double r = static_cast<double>(rank); return r <= kPairHeadRanks ? 1.0 : std::pow(kPairHeadRanks / r, 1.5); }  // ranks up to this keep their full weight

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

}  // namespace

GroundTruth::GroundTruth(const SyntheticOptions& options)
    : options_(options), token_digits_(options.cardinality <= (uint64_t{1} << 32) ? 8 : 16) {
  const uint64_t seed = Mix64(options.seed ^ 0x6a09e667f3bcc909ULL);
  for (int s = 0; s < options.num_slots; ++s) {
    uint64_t salt = Mix64(seed + static_cast<uint64_t>(s));
    slot_salt_.push_back(salt);
    slot_amp_.push_back(0.25 + 0.75 * Unit(Mix64(salt)));  // some slots matter more
  }
  // Expected squared fade of a drawn rank, estimated by the head mass (a fixed guess is
  // enough: calibration only needs the order of magnitude).
  constexpr double kDecaySq = 0.75;
  double amp_sq = 0;
  for (double a : slot_amp_) amp_sq += a * a;
  double present = 1.0 - options.empty_rate;
  for (double& a : slot_amp_) a *= kMainStd / std::sqrt(amp_sq * kDecaySq * present);

  int pairs = std::min(kMaxPairs, options.num_slots / 2);
  for (int i = 0; i < pairs; ++i) {
    // Distinct hidden slots: a random pairing of a seeded permutation's first 2*pairs slots.
    uint64_t h = Mix64(seed ^ (0x100 + static_cast<uint64_t>(i)));
    int a = static_cast<int>(h % static_cast<uint64_t>(options.num_slots));
    int b = static_cast<int>((a + 1 + (h >> 32) % static_cast<uint64_t>(options.num_slots - 1)) %
                             static_cast<uint64_t>(options.num_slots));
    pair_a_.push_back(a);
    pair_b_.push_back(b);
  }
  if (pairs > 0) pair_amp_ = kPairStd / std::sqrt(pairs * kDecaySq * kDecaySq * present * present);

  for (int j = 0; j < options.num_dense; ++j) {
    uint64_t h = Mix64(seed ^ (0x200 + static_cast<uint64_t>(j)));
    dense_scale_.push_back(std::floor(std::exp(Unit(h) * std::log(200.0))));  // 1 .. 200
    // log1p of a log-logistic count has a standard deviation near pi / sqrt(3).
    dense_coef_.push_back(Gauss(Mix64(h)) * kDenseStd /
                          (1.8 * std::sqrt(static_cast<double>(options.num_dense))));
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

double GroundTruth::Decay(uint64_t rank) const {
  double r = static_cast<double>(rank);
  return r <= kHeadRanks ? 1.0 : kHeadRanks / r;
}

double GroundTruth::Logit(const SyntheticRow& row) const {
  double z = bias_;
  for (int s = 0; s < options_.num_slots; ++s) {
    uint64_t rank = row.ranks[static_cast<size_t>(s)];
    if (rank == 0) continue;
    z += slot_amp_[static_cast<size_t>(s)] * Decay(rank) * Gauss(Mix64(slot_salt_[static_cast<size_t>(s)] ^ rank));
  }
  for (size_t p = 0; p < pair_a_.size(); ++p) {
    uint64_t ra = row.ranks[static_cast<size_t>(pair_a_[p])];
    uint64_t rb = row.ranks[static_cast<size_t>(pair_b_[p])];
    if (ra == 0 || rb == 0) continue;
    uint64_t ha = Mix64(slot_salt_[static_cast<size_t>(pair_a_[p])] ^ ~ra);
    uint64_t hb = Mix64(slot_salt_[static_cast<size_t>(pair_b_[p])] ^ ~rb);
    double dot = 0;
    for (int d = 0; d < kPairRank; ++d) {
      dot += Gauss(Mix64(ha + static_cast<uint64_t>(d))) * Gauss(Mix64(hb + static_cast<uint64_t>(d)));
    }
    z += pair_amp_ * PairDecay(ra) * PairDecay(rb) * dot / std::sqrt(static_cast<double>(kPairRank));
  }
  for (int j = 0; j < options_.num_dense; ++j) {
    // An empty field reads as 0 (TransformDense(0) == 0), so the truth sees it that way too.
    double t = row.int_empty[static_cast<size_t>(j)] ? 0.0 : TransformDenseInt(row.ints[static_cast<size_t>(j)]);
    z += dense_coef_[static_cast<size_t>(j)] * (t - std::log1p(dense_scale_[static_cast<size_t>(j)]));
  }
  return z;
}

}  // namespace strata::data_internal
