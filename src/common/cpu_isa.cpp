// CpuIsa: what the CPU runs (cpuid through GCC's __builtin_cpu_supports) and STRATA_ISA.
#include "strata/common/cpu_isa.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace strata {
namespace {

CpuIsa Cap() {
  const char* want = std::getenv("STRATA_ISA");
  for (CpuIsa isa : {CpuIsa::kBaseline, CpuIsa::kAvx2, CpuIsa::kAvx512, CpuIsa::kAvx512Bf16}) {
    if (want != nullptr && std::strcmp(want, CpuIsaName(isa)) == 0) return isa;
  }
  return CpuIsa::kAvx512Bf16;
}

}  // namespace

const char* CpuIsaName(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx2:
      return "avx2";
    case CpuIsa::kAvx512:
      return "avx512";
    case CpuIsa::kAvx512Bf16:
      return "avx512bf16";
    case CpuIsa::kBaseline:
      break;
  }
  return "baseline";
}

std::vector<CpuIsa> SupportedIsas() {
  std::vector<CpuIsa> isas{CpuIsa::kBaseline};
  if (__builtin_cpu_supports("avx2")) isas.push_back(CpuIsa::kAvx2);
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
  if (avx512) isas.push_back(CpuIsa::kAvx512);
  if (avx512 && __builtin_cpu_supports("avx512bf16")) isas.push_back(CpuIsa::kAvx512Bf16);
  return isas;
}

CpuIsa DetectedIsa() {
  static const CpuIsa isa = std::min(SupportedIsas().back(), Cap());
  return isa;
}

}  // namespace strata
