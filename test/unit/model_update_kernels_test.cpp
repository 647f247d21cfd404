// UpdateKernels on every instruction set this CPU runs: bit for bit the per-coordinate
// functions of update_math.h, FloatToBf16 (the baseline's loop), and pooling, its scatter
// (from fp32 and bf16 gradients) and a ReLU mask written here, on spans of every length
// around the vector widths and at unaligned starts; and the set Kernels() chose is one the
// CPU runs.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <iterator>
#include <random>
#include <vector>

#include "strata/common/cpu_isa.h"
#include "strata/common/half.h"
#include "strata/model/update_kernels.h"

namespace strata {
namespace {

std::vector<float> Uniform(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Values whose bf16 rounding is each of its cases: ties to even both ways, a carry into
// the exponent, up to infinity, denormals, NaNs (kept quiet) and the infinities; then
// ordinary values.
std::vector<float> Bf16Cases(size_t n) {
  const uint32_t special[] = {0x3f808000u, 0x3f818000u, 0x3f80ffffu, 0x7f7fffffu, 0x00018000u, 0x80000001u,
                              0x7fc00001u, 0x7f800001u, 0xffbfffffu, 0x7f800000u, 0xff800000u, 0x00000000u};
  std::vector<float> v = Uniform(n, -3.0f, 3.0f, 8);
  for (size_t i = 0; i < n; ++i) {
    if (i % 3 == 0) std::memcpy(&v[i], &special[(i / 3) % std::size(special)], sizeof(float));
  }
  return v;
}

constexpr size_t kLengths[] = {0, 1, 7, 8, 15, 16, 17, 31, 33, 64, 100, 1000};

// pool_example and scatter_example with rows of dim floats (the span length under test) at
// an unaligned start, against the loops written here: four rows (one holding -0.0f, which a
// sum from +0 turns to +0), an example of three slots whose occurrences name a row twice,
// and slots with none and with one.
void CheckPooling(const UpdateKernels& k, size_t dim, size_t offset) {
  constexpr size_t kRows = 4;
  std::vector<float> table = Uniform(offset + kRows * dim, -1.0f, 1.0f, 6);
  if (dim > 0) table[offset + 2 * dim] = -0.0f;
  const std::vector<uint8_t*> rows = {
      reinterpret_cast<uint8_t*>(&table[offset]), reinterpret_cast<uint8_t*>(&table[offset + dim]),
      reinterpret_cast<uint8_t*>(&table[offset + 2 * dim]), reinterpret_cast<uint8_t*>(&table[offset + 3 * dim])};
  const std::vector<uint32_t> ids = {2, 0, 3, 0, 1, 2};
  const std::vector<std::vector<uint32_t>> examples = {{0, 0, 1, 6}, {0, 5, 5, 6}, {1, 2, 3, 4}};  // slot offsets
  for (const std::vector<uint32_t>& offsets : examples) {
    CAPTURE(offsets[1]);
    const size_t slots = offsets.size() - 1;
    std::vector<float> x(offset + slots * dim, 5.0f), want = x;
    for (size_t s = 0; s < slots; ++s) {
      for (size_t c = 0; c < dim; ++c) {
        float sum = 0.0f;
        for (uint32_t j = offsets[s]; j < offsets[s + 1]; ++j) sum += reinterpret_cast<const float*>(rows[ids[j]])[c];
        want[offset + s * dim + c] = sum;
      }
    }
    k.pool_example(x.data() + offset, rows.data(), ids.data(), offsets.data(), slots, dim);
    CHECK(SameBits(x, want));

    // The scatter's gradient given in fp32, then as bf16 roundings (whose values it adds).
    const std::vector<float> d = Uniform(offset + slots * dim, -1.0f, 1.0f, 11);
    std::vector<uint16_t> d16(d.size());
    std::vector<float> widened(d.size());
    for (size_t i = 0; i < d.size(); ++i) d16[i] = FloatToBf16(d[i]), widened[i] = Bf16ToFloat(d16[i]);
    const auto want_scatter = [&](const std::vector<float>& values) {
      std::vector<float> want_grads = Uniform(offset + kRows * dim, -1.0f, 1.0f, 12);
      for (size_t s = 0; s < slots; ++s) {
        for (uint32_t j = offsets[s]; j < offsets[s + 1]; ++j) {
          for (size_t c = 0; c < dim; ++c) want_grads[offset + ids[j] * dim + c] += values[offset + s * dim + c];
        }
      }
      return want_grads;
    };
    std::vector<float> grads = Uniform(offset + kRows * dim, -1.0f, 1.0f, 12);
    k.scatter_example(grads.data() + offset, ids.data(), offsets.data(), slots, d.data() + offset, dim);
    CHECK(SameBits(grads, want_scatter(d)));
    grads = Uniform(offset + kRows * dim, -1.0f, 1.0f, 12);
    k.scatter_example_bf16(grads.data() + offset, ids.data(), offsets.data(), slots, d16.data() + offset, dim);
    CHECK(SameBits(grads, want_scatter(widened)));
  }
}

}  // namespace

TEST_CASE("model: the vector kernels of every instruction set round as the per-coordinate functions") {
  const std::vector<CpuIsa> isas = SupportedIsas();
  REQUIRE(isas.front() == CpuIsa::kBaseline);
  bool chosen_supported = false;
  for (CpuIsa isa : isas) chosen_supported |= isa == DetectedIsa();
  CHECK(chosen_supported);
  for (CpuIsa isa : isas) {
    CAPTURE(CpuIsaName(isa));
    const UpdateKernels& k = UpdateKernelsFor(isa);
    for (size_t n : kLengths) {
      for (size_t offset : {0, 1, 3}) {  // unaligned starts
        CAPTURE(n);
        CAPTURE(offset);
        const size_t total = n + offset;
        const std::vector<float> g = Uniform(total, -1.0f, 1.0f, 1);
        CheckPooling(k, n, offset);

        std::vector<float> w = Uniform(total, -0.5f, 0.5f, 2), s = Uniform(total, 0.01f, 2.0f, 3);
        std::vector<float> want_w = w, want_s = s;
        for (size_t i = offset; i < total; ++i) AdagradUpdate(&want_w[i], &want_s[i], g[i], 0.05f);
        k.adagrad(w.data() + offset, s.data() + offset, g.data() + offset, n, 0.05f);
        CHECK(SameBits(w, want_w));
        CHECK(SameBits(s, want_s));

        const AdamStepScalars scalars = MakeAdamStepScalars(0.001f, 0.9f, 0.999f, 1e-8f, 7);
        std::vector<float> m = Uniform(total, -0.1f, 0.1f, 4), v = Uniform(total, 0.0f, 0.01f, 5);
        std::vector<float> want_m = m, want_v = v;
        want_w = w;
        for (size_t i = offset; i < total; ++i) AdamUpdate(&want_w[i], &want_m[i], &want_v[i], g[i], scalars);
        k.adam(w.data() + offset, m.data() + offset, v.data() + offset, g.data() + offset, n, scalars);
        CHECK(SameBits(w, want_w));
        CHECK(SameBits(m, want_m));
        CHECK(SameBits(v, want_v));

        std::vector<uint16_t> bf16(total, 7), want_bf16 = bf16;
        const std::vector<float> x = Bf16Cases(total);
        for (size_t i = offset; i < total; ++i) want_bf16[i] = FloatToBf16(x[i]);
        k.to_bf16(bf16.data() + offset, x.data() + offset, n);
        CHECK(bf16 == want_bf16);

        // The ReLU mask: activations of every sign and class (x's cases: zeros, denormals,
        // NaNs, infinities), gradients from ordinary values.
        std::vector<uint16_t> act(total), grad(total);
        const std::vector<float> d = Uniform(total, -2.0f, 2.0f, 9);
        for (size_t i = 0; i < total; ++i) act[i] = FloatToBf16(x[i]), grad[i] = FloatToBf16(d[i]);
        std::vector<uint16_t> want_grad = grad;
        std::vector<float> db = Uniform(total, -1.0f, 1.0f, 10), want_db = db;
        for (size_t i = offset; i < total; ++i) {
          if (!(Bf16ToFloat(act[i]) > 0.0f)) want_grad[i] = 0;
          want_db[i] += Bf16ToFloat(want_grad[i]);
        }
        k.relu_mask_bf16(act.data() + offset, grad.data() + offset, db.data() + offset, n);
        CHECK(grad == want_grad);
        CHECK(SameBits(db, want_db));

        // And in fp32, on the same activations and gradients.
        std::vector<float> grad32 = d, want_grad32 = d, db32 = db, want_db32 = db;
        for (size_t i = offset; i < total; ++i) {
          if (!(x[i] > 0.0f)) want_grad32[i] = 0.0f;
          want_db32[i] += want_grad32[i];
        }
        k.relu_mask(x.data() + offset, grad32.data() + offset, db32.data() + offset, n);
        CHECK(SameBits(grad32, want_grad32));
        CHECK(SameBits(db32, want_db32));
      }
    }
  }
}

}  // namespace strata
