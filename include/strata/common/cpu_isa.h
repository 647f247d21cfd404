// CpuIsa: the x86 vector instruction sets the host kernels are compiled for, besides the
// build's baseline (x86-64-v2: SSE4.2), and which of them this CPU runs: AVX2, AVX-512
// (F and BW), and AVX-512 with AVX512-BF16's conversions. Kernels compiled for several
// (strata/model/update_kernels.h) are chosen once, at their first use, by DetectedIsa;
// STRATA_ISA=baseline|avx2|avx512|avx512bf16 in the environment caps the choice (to compare
// or debug; a set the CPU lacks is never chosen). Thread-safe.
#pragma once

#include <vector>

namespace strata {

enum class CpuIsa { kBaseline = 0, kAvx2 = 1, kAvx512 = 2, kAvx512Bf16 = 3 };

const char* CpuIsaName(CpuIsa isa);
// Every set this CPU runs, the baseline first.
std::vector<CpuIsa> SupportedIsas();
// The best of SupportedIsas(), capped by STRATA_ISA; computed once.
CpuIsa DetectedIsa();

}  // namespace strata
