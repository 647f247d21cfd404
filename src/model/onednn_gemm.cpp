// OnednnGemm through oneDNN matmul (model/onednn_gemm.h): strided memory descriptors express
// the transposes, a sum post-op the accumulation, a bias and a ReLU post-op the fused
// layer; primitives are cached by shape.
#include "model/onednn_gemm.h"

#include <omp.h>

#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "model/bf16_rounding.h"

namespace strata {
namespace {

using dnnl::memory;
using Dims = memory::dims;

// A (rows, cols) matrix stored row-major, or its transpose when `trans` (stored cols x rows).
memory::desc MatrixDesc(int rows, int cols, bool trans, memory::data_type type) {
  const Dims strides = trans ? Dims{1, rows} : Dims{cols, 1};
  return memory::desc(Dims{rows, cols}, type, strides);
}

// The operand oneDNN reads (read only): its fp32 values, or for bf16 the caller's rounding
// or else one made in `scratch` on `threads`.
void* Operand(DensePrecision precision, GemmOperand in, size_t n, HugeVector<uint16_t>* scratch, int threads) {
  if (precision == DensePrecision::kFp32) return const_cast<float*>(in.values);
  if (in.bf16 != nullptr) return const_cast<uint16_t*>(in.bf16);
  return const_cast<uint16_t*>(RoundToBf16(in.values, n, scratch, threads));
}

memory::data_type OperandType(DensePrecision precision) {
  return precision == DensePrecision::kBf16 ? memory::data_type::bf16 : memory::data_type::f32;
}

memory::data_type ResultType(bool bf16) { return bf16 ? memory::data_type::bf16 : memory::data_type::f32; }

// A bias of n floats, broadcast over the rows of the product.
memory::desc BiasDesc(int n) { return memory::desc(Dims{1, n}, memory::data_type::f32, Dims{n, 1}); }

}  // namespace

struct OnednnGemm::Impl {
  // What follows the product: nothing, C += (accumulate), or C = relu(product + bias).
  enum class Epilogue { kNone, kAccumulate, kBiasRelu };
  // The last field: the result is written in bf16.
  using Shape = std::tuple<DensePrecision, bool, bool, int, int, int, Epilogue, bool>;
  // Distinct shapes are few (three products a layer, a batch size or two), but a pass's
  // last batch may differ from pass to pass: the cache is cleared when it grows past this.
  static constexpr size_t kMaxShapes = 64;

  explicit Impl(int t) : threads(t), engine(dnnl::engine::kind::cpu, 0), stream(engine) {}

  dnnl::matmul& Primitive(const Shape& shape) {
    auto it = primitives.find(shape);
    if (it != primitives.end()) return it->second;
    if (primitives.size() >= kMaxShapes) primitives.clear();
    const auto [precision, trans_a, trans_b, M, N, K, epilogue, bf16_out] = shape;
    dnnl::post_ops ops;
    if (epilogue == Epilogue::kAccumulate) ops.append_sum(1.0f);
    if (epilogue == Epilogue::kBiasRelu) ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    const memory::data_type type = OperandType(precision);
    const memory::desc a = MatrixDesc(M, K, trans_a, type), b = MatrixDesc(K, N, trans_b, type);
    const memory::desc c = MatrixDesc(M, N, false, ResultType(bf16_out));
    const dnnl::matmul::desc desc = epilogue == Epilogue::kBiasRelu
                                        ? dnnl::matmul::desc(a, b, BiasDesc(N), c)
                                        : dnnl::matmul::desc(a, b, c);
    return primitives.emplace(shape, dnnl::matmul(dnnl::matmul::primitive_desc(desc, attr, engine))).first->second;
  }

  // C = op(A) op(B) and its epilogue (bias: N floats for kBiasRelu).
  void Run(const Shape& shape, GemmOperand A, GemmOperand B, const float* bias, void* C) {
    const auto [precision, trans_a, trans_b, M, N, K, epilogue, bf16_out] = shape;
    omp_set_num_threads(threads);  // this thread's OpenMP team for oneDNN
    const memory::data_type type = OperandType(precision);
    memory a(MatrixDesc(M, K, trans_a, type), engine, Operand(precision, A, static_cast<size_t>(M) * K, &a16, threads));
    memory b(MatrixDesc(K, N, trans_b, type), engine, Operand(precision, B, static_cast<size_t>(K) * N, &b16, threads));
    memory c(MatrixDesc(M, N, false, ResultType(bf16_out)), engine, C);
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}};
    if (epilogue == Epilogue::kBiasRelu) {
      args.emplace(DNNL_ARG_BIAS, memory(BiasDesc(N), engine, const_cast<float*>(bias)));  // read only
    }
    Primitive(shape).execute(stream, args);
    stream.wait();
  }

  const int threads;
  dnnl::engine engine;
  dnnl::stream stream;
  std::map<Shape, dnnl::matmul> primitives;
  HugeVector<uint16_t> a16, b16;  // bf16 operands
};

bool OnednnGemm::Bf16Supported() {
  return __builtin_cpu_supports("avx512bf16") || __builtin_cpu_supports("amx-bf16");
}

OnednnGemm::OnednnGemm(int threads) : impl_(std::make_unique<Impl>(threads < 1 ? 1 : threads)) {}

OnednnGemm::~OnednnGemm() = default;

void OnednnGemm::Run(DensePrecision precision, bool trans_a, bool trans_b, int M, int N, int K, GemmOperand A,
                     GemmOperand B, bool accumulate, float* C) {
  const auto epilogue = accumulate ? Impl::Epilogue::kAccumulate : Impl::Epilogue::kNone;
  impl_->Run(Impl::Shape{precision, trans_a, trans_b, M, N, K, epilogue, false}, A, B, nullptr, C);
}

void OnednnGemm::RunBiasRelu(DensePrecision precision, int M, int N, int K, GemmOperand A, GemmOperand B,
                             const float* bias, float* C) {
  impl_->Run(Impl::Shape{precision, false, false, M, N, K, Impl::Epilogue::kBiasRelu, false}, A, B, bias, C);
}

void OnednnGemm::RunBiasReluToBf16(int M, int N, int K, GemmOperand A, GemmOperand B, const float* bias,
                                   uint16_t* C16) {
  const Impl::Shape shape{DensePrecision::kBf16, false, false, M, N, K, Impl::Epilogue::kBiasRelu, true};
  impl_->Run(shape, A, B, bias, C16);
}

void OnednnGemm::RunToBf16(bool trans_a, bool trans_b, int M, int N, int K, GemmOperand A, GemmOperand B,
                           uint16_t* C16) {
  const Impl::Shape shape{DensePrecision::kBf16, trans_a, trans_b, M, N, K, Impl::Epilogue::kNone, true};
  impl_->Run(shape, A, B, nullptr, C16);
}

}  // namespace strata
