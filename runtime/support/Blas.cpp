//===- Blas.cpp - OpenBLAS set-up -----------------------------------------===//

#include "support/Blas.h"

#include <cblas.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

extern "C" char *openblas_get_corename(void);

namespace mgrt {

void initBlas() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

const char *blasCoreHint() {
  static char hint[256];
  static const char *result = []() -> const char * {
    if (std::getenv("OPENBLAS_CORETYPE"))
      return nullptr; // the user chose
    const char *core = openblas_get_corename();
    // OpenBLAS targets without AVX2 kernels.
    static const char *const old[] = {
        "Prescott", "Core2",       "Penryn",  "Dunnington",   "Nehalem",
        "Atom",     "Sandybridge", "Katmai",  "Coppermine",   "Northwood",
        "Banias",   "Barcelona",   "Opteron", "Opteron_SSE3", "Bobcat",
        "Nano",     "Athlon"};
    bool isOld = false;
    for (const char *o : old)
      isOld |= core && std::strcmp(core, o) == 0;
    __builtin_cpu_init();
    const char *better = nullptr;
    if (__builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq"))
      better = "SkylakeX";
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      better = "Haswell";
    if (!isOld || !better)
      return nullptr;
    std::snprintf(hint, sizeof hint,
                  "OpenBLAS runs its %s kernels on this CPU, so matmul uses "
                  "the runtime's own GEMM (OPENBLAS_CORETYPE=%s would fix "
                  "OpenBLAS)",
                  core, better);
    return hint;
  }();
  return result;
}

} // namespace mgrt
