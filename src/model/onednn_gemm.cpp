// OnednnGemm through oneDNN matmul (model/onednn_gemm.h): strided memory descriptors express
// the transposes, a sum post-op the accumulation; primitives are cached by shape.
#include "model/onednn_gemm.h"

#include <omp.h>

#include <map>
#include <tuple>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "strata/model/update_kernels.h"

namespace strata {
namespace {

using dnnl::memory;
using Dims = memory::dims;

// A (rows, cols) matrix stored row-major, or its transpose when `trans` (stored cols x rows).
memory::desc MatrixDesc(int rows, int cols, bool trans, memory::data_type type) {
  const Dims strides = trans ? Dims{1, rows} : Dims{cols, 1};
  return memory::desc(Dims{rows, cols}, type, strides);
}

// The operand oneDNN reads: `in` itself in fp32, or its bf16 rounding in `scratch`.
void* Operand(DensePrecision precision, const float* in, size_t n, std::vector<uint16_t>* scratch) {
  if (precision == DensePrecision::kFp32) return const_cast<float*>(in);  // read only
  scratch->resize(n);
  Kernels().to_bf16(scratch->data(), in, n);
  return scratch->data();
}

memory::data_type OperandType(DensePrecision precision) {
  return precision == DensePrecision::kBf16 ? memory::data_type::bf16 : memory::data_type::f32;
}

}  // namespace

struct OnednnGemm::Impl {
  using Shape = std::tuple<DensePrecision, bool, bool, int, int, int, bool>;
  // Distinct shapes are few (three products a layer, a batch size or two), but a pass's
  // last batch may differ from pass to pass: the cache is cleared when it grows past this.
  static constexpr size_t kMaxShapes = 64;

  explicit Impl(int t) : threads(t), engine(dnnl::engine::kind::cpu, 0), stream(engine) {}

  dnnl::matmul& Primitive(const Shape& shape) {
    auto it = primitives.find(shape);
    if (it != primitives.end()) return it->second;
    if (primitives.size() >= kMaxShapes) primitives.clear();
    const auto [precision, trans_a, trans_b, M, N, K, accumulate] = shape;
    dnnl::post_ops ops;
    if (accumulate) ops.append_sum(1.0f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    const memory::data_type type = OperandType(precision);
    const dnnl::matmul::desc desc(MatrixDesc(M, K, trans_a, type), MatrixDesc(K, N, trans_b, type),
                                  MatrixDesc(M, N, false, memory::data_type::f32));
    return primitives.emplace(shape, dnnl::matmul(dnnl::matmul::primitive_desc(desc, attr, engine))).first->second;
  }

  const int threads;
  dnnl::engine engine;
  dnnl::stream stream;
  std::map<Shape, dnnl::matmul> primitives;
  std::vector<uint16_t> a16, b16;  // bf16 operands
};

bool OnednnGemm::Bf16Supported() {
  return __builtin_cpu_supports("avx512bf16") || __builtin_cpu_supports("amx-bf16");
}

OnednnGemm::OnednnGemm(int threads) : impl_(std::make_unique<Impl>(threads < 1 ? 1 : threads)) {}

OnednnGemm::~OnednnGemm() = default;

void OnednnGemm::Run(DensePrecision precision, bool trans_a, bool trans_b, int M, int N, int K, const float* A,
                     const float* B, bool accumulate, float* C) {
  Impl& d = *impl_;
  omp_set_num_threads(d.threads);  // this thread's OpenMP team for oneDNN
  const memory::data_type type = OperandType(precision);
  memory a(MatrixDesc(M, K, trans_a, type), d.engine, Operand(precision, A, static_cast<size_t>(M) * K, &d.a16));
  memory b(MatrixDesc(K, N, trans_b, type), d.engine, Operand(precision, B, static_cast<size_t>(K) * N, &d.b16));
  memory c(MatrixDesc(M, N, false, memory::data_type::f32), d.engine, C);
  dnnl::matmul& mm = d.Primitive(Impl::Shape{precision, trans_a, trans_b, M, N, K, accumulate});
  mm.execute(d.stream, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
  d.stream.wait();
}

}  // namespace strata
