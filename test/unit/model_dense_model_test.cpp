// DenseModel: the gradients of every model (dnn, deepfm, dcn full and low rank, dlrm with
// and without dense features, wdl) against
// finite differences of its own forward in double-free form (the float forward evaluated at
// perturbed parameters and inputs, with a step large enough for float); the layout (the MLP
// first, then the cross layers) and the named tensors checkpoints write.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "strata/common/partition.h"
#include "strata/model/dense_model.h"

namespace strata {
namespace {

ModelSpec SmallSpec(ModelKind kind, int cross_rank) {
  ModelSpec spec;
  spec.kind = kind;
  spec.num_slots = 3;
  spec.embedding_dim = 2;
  spec.num_dense = 2;
  spec.mlp = {5};
  spec.cross_layers = 2;
  spec.cross_rank = cross_rank;
  spec.bottom_mlp = {4};
  return spec;
}

std::vector<float> Random(uint64_t seed, size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t k = 0; k < n; ++k) v[k] = scale * (static_cast<float>(Mix64(seed * 7919 + k) >> 40) * 0x1.0p-23f - 1.0f);
  return v;
}

// sum_i c_i logit_i at (params, x), in float.
double Objective(const DenseModel& model, const std::vector<float>& params, const std::vector<float>& x, int B,
                 const std::vector<float>& c) {
  auto ws = model.MakeWorkspace(B);
  std::vector<float> logits(B);
  model.Forward(params.data(), x.data(), B, &ws, logits.data());
  double s = 0;
  for (int i = 0; i < B; ++i) s += static_cast<double>(c[i]) * logits[i];
  return s;
}

void CheckGradients(const ModelSpec& spec) {
  const DenseModel model(spec);
  const int B = 3;
  std::vector<float> params(model.num_params());
  model.InitParams(5, params.data());
  for (float& p : params) p += 0.05f * static_cast<float>(&p - params.data()) / static_cast<float>(params.size());
  std::vector<float> x = Random(6, static_cast<size_t>(B) * model.input_width(), 1.0f);
  const std::vector<float> c = Random(7, B, 1.0f);
  auto ws = model.MakeWorkspace(B);
  std::vector<float> logits(B), dparams(params.size(), 9.0f), dinput(x.size(), 9.0f);
  model.Forward(params.data(), x.data(), B, &ws, logits.data());
  model.Backward(params.data(), x.data(), B, c.data(), &ws, dparams.data(), dinput.data());
  const float h = 1e-2f;
  const double f0 = Objective(model, params, x, B, c);
  int kinks = 0, checked = 0;
  auto check = [&](std::vector<float>* v, const std::vector<float>& analytic, const char* what) {
    for (size_t k = 0; k < v->size(); ++k) {
      const float saved = (*v)[k];
      (*v)[k] = saved + h;
      const double up = Objective(model, params, x, B, c);
      (*v)[k] = saved - h;
      const double down = Objective(model, params, x, B, c);
      (*v)[k] = saved;
      // A ReLU switching within the step makes the one-sided slopes differ: no derivative
      // to compare there.
      if (std::fabs((up - f0) - (f0 - down)) / h > 1e-2 * (1.0 + std::fabs(up - down) / (2.0 * h))) {
        ++kinks;
        continue;
      }
      ++checked;
      const double fd = (up - down) / (2.0 * h);
      INFO(std::string(ModelKindName(spec.kind)) << " rank " << spec.cross_rank << ": " << what << " " << k);
      CHECK(std::fabs(analytic[k] - fd) <= 2e-3 + 2e-3 * std::fabs(fd));
    }
  };
  check(&params, dparams, "parameter");
  check(&x, dinput, "input");
  CHECK(kinks * 10 < checked);
}

TEST_CASE("model: every model's gradients match finite differences") {
  CheckGradients(SmallSpec(ModelKind::kDnn, 0));
  CheckGradients(SmallSpec(ModelKind::kDeepFm, 0));
  CheckGradients(SmallSpec(ModelKind::kDcn, 0));
  CheckGradients(SmallSpec(ModelKind::kDcn, 2));
  CheckGradients(SmallSpec(ModelKind::kDlrm, 0));
  ModelSpec no_dense = SmallSpec(ModelKind::kDlrm, 0);
  no_dense.num_dense = 0;
  CheckGradients(no_dense);
  CheckGradients(SmallSpec(ModelKind::kWdl, 0));
}

TEST_CASE("model: wdl's rows hold a wide weight that adds to the logit") {
  const ModelSpec spec = SmallSpec(ModelKind::kWdl, 0);
  CHECK(spec.row_dim() == 3);
  CHECK(RowLayoutOf(spec).dim == 3);
  const DenseModel model(spec);
  CHECK(model.input_width() == 3 * 3 + 2);
  CHECK(model.mlp().input_width() == 3 * 2 + 2);
  std::vector<float> params(model.num_params());
  model.InitParams(1, params.data());
  std::vector<float> x(static_cast<size_t>(model.input_width()), 0.5f);
  auto ws = model.MakeWorkspace(1);
  float with = 0, without = 0;
  model.Forward(params.data(), x.data(), 1, &ws, &with);
  for (int s = 0; s < 3; ++s) x[s * 3 + 2] = 0.0f;  // the wide weights
  model.Forward(params.data(), x.data(), 1, &ws, &without);
  CHECK(with - without == doctest::Approx(1.5f));
}

TEST_CASE("model: dlrm's MLP reads z and the pairwise dots of z and the slots") {
  const ModelSpec spec = SmallSpec(ModelKind::kDlrm, 0);
  const DenseModel model(spec);
  // 4 vectors (z and 3 slots) of width 2: z, then 6 dot products.
  CHECK(model.mlp().input_width() == 2 + 6);
  CHECK(model.num_params() == model.mlp().num_params() + (2 * 4 + 4) + (4 * 2 + 2));
  CHECK(model.Blocks().back().name == "bottom/1/bias");
  const DotInteraction dot{3, 2, 3 * 2 + 2, true};
  const std::vector<float> input = {1, 2, 3, 4, 5, 6, 100, 200};  // e1 e2 e3, then dense
  const std::vector<float> z = {-1, 1};
  std::vector<float> out(dot.output_width());
  dot.Forward(input.data(), z.data(), 1, out.data());
  const std::vector<float> expected = {-1, 1, 1, 1, 1, 11, 17, 39};  // z; z.e1 z.e2 z.e3 e1.e2 e1.e3 e2.e3
  CHECK(out == expected);
}

TEST_CASE("model: the MLP's parameters come first and every tensor is named") {
  const ModelSpec dnn = SmallSpec(ModelKind::kDnn, 0);
  const DenseModel plain(dnn);
  CHECK(plain.num_params() == plain.mlp().num_params());
  const int width = 3 * 2 + 2;
  const DenseModel full(SmallSpec(ModelKind::kDcn, 0));
  CHECK(full.num_params() == full.mlp().num_params() + 2u * (width * width + width));
  const DenseModel low(SmallSpec(ModelKind::kDcn, 2));
  CHECK(low.num_params() == low.mlp().num_params() + 2u * (2 * width * 2 + width));
  size_t covered = 0;
  for (const ParamBlock& b : low.Blocks()) covered += static_cast<size_t>(b.rows > 0 ? b.rows : 1) * b.cols;
  CHECK(covered == low.num_params());
  const auto blocks = low.Blocks();
  CHECK(blocks.back().name == "cross/1/bias");
  CHECK(blocks[blocks.size() - 3].name == "cross/1/u");
  CHECK(blocks[blocks.size() - 3].offset == low.mlp().num_params() + (2 * width * 2 + width));
}

}  // namespace
}  // namespace strata
