//===- VectorMath.h - 16-lane float helpers for the kernels -----*- C++ -*-===//
//
// Internal to the runtime. GCC vector extensions rather than intrinsics: the
// same code compiles to one zmm register per vector inside a function built
// for x86-64-v4, to ymm pairs for x86-64-v3 and to SSE for the baseline, and
// MGRT_SIMD_DISPATCH picks the build at run time. No -march=native (the
// executable must run on any x86-64) and no target_clones (its ifunc
// resolvers run during relocation, which breaks e.g. ThreadSanitizer).
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_KERNELS_VECTORMATH_H
#define MEGAGRAPH_RUNTIME_KERNELS_VECTORMATH_H

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

#define MGRT_INLINE inline __attribute__((always_inline))
/// An inlined helper of AVX2 intrinsics, for the hand-written AVX2 bodies
/// (callable only from functions built for x86-64-v3 or above).
#define MGRT_V3_INLINE                                                         \
  inline __attribute__((always_inline, target("arch=x86-64-v3")))

namespace mgrt {

/// The widest x86-64 micro-architecture level this CPU supports (cached),
/// or a lower one that MEGAGRAPH_SIMD (`v3` or `baseline`) asks for: the
/// AVX2 and portable builds of every kernel run, and are timed, on an
/// AVX-512 machine too.
enum class SimdLevel { Baseline, V3, V4 };
inline SimdLevel simdLevel() {
  static const SimdLevel level = [] {
    __builtin_cpu_init();
    SimdLevel cpu = SimdLevel::Baseline;
    if (__builtin_cpu_supports("x86-64-v4"))
      cpu = SimdLevel::V4;
    else if (__builtin_cpu_supports("x86-64-v3"))
      cpu = SimdLevel::V3;
    SimdLevel cap = SimdLevel::V4;
    if (const char *env = std::getenv("MEGAGRAPH_SIMD")) {
      if (std::strcmp(env, "v3") == 0)
        cap = SimdLevel::V3;
      else if (std::strcmp(env, "baseline") == 0)
        cap = SimdLevel::Baseline;
    }
    return cpu < cap ? cpu : cap;
  }();
  return level;
}

/// `void NAME PARAMS`, calling NAME##V4, NAME##V3 or NAME##Baseline with
/// ARGS: the best level the CPU supports (simdLevel).
#define MGRT_SIMD_SELECT(NAME, PARAMS, ARGS)                                   \
  void NAME PARAMS {                                                           \
    switch (::mgrt::simdLevel()) {                                             \
    case ::mgrt::SimdLevel::V4:                                                \
      return NAME##V4 ARGS;                                                    \
    case ::mgrt::SimdLevel::V3:                                                \
      return NAME##V3 ARGS;                                                    \
    default:                                                                   \
      return NAME##Baseline ARGS;                                              \
    }                                                                          \
  }

/// Defines `void NAME PARAMS` running NAME##Body ARGS (an MGRT_INLINE
/// function) compiled for the best of x86-64-v4, x86-64-v3 and the baseline
/// that the CPU supports.
#define MGRT_SIMD_DISPATCH(NAME, PARAMS, ARGS)                                 \
  __attribute__((target("arch=x86-64-v4"))) static void NAME##V4 PARAMS {      \
    NAME##Body ARGS;                                                           \
  }                                                                            \
  __attribute__((target("arch=x86-64-v3"))) static void NAME##V3 PARAMS {      \
    NAME##Body ARGS;                                                           \
  }                                                                            \
  static void NAME##Baseline PARAMS { NAME##Body ARGS; }                       \
  MGRT_SIMD_SELECT(NAME, PARAMS, ARGS)

/// MGRT_SIMD_DISPATCH for a body templated on the level it is built for
/// (`template <SimdLevel L> NAME##Body`), so that it can choose code that
/// the level compiles well. Without AVX-512, GCC 12 lowers every comparison
/// or select of the 16-lane VFloat lane by lane (vmax, vexp's clamps,
/// loadIndices): a hot loop of the x86-64-v3 build that needs them takes
/// an 8-lane intrinsic path under L == SimdLevel::V3, as the attention
/// backward's tile does (AttentionBackward.cpp).
#define MGRT_SIMD_DISPATCH_LEVEL(NAME, PARAMS, ARGS)                           \
  __attribute__((target("arch=x86-64-v4"))) static void NAME##V4 PARAMS {      \
    NAME##Body<::mgrt::SimdLevel::V4> ARGS;                                    \
  }                                                                            \
  __attribute__((target("arch=x86-64-v3"))) static void NAME##V3 PARAMS {      \
    NAME##Body<::mgrt::SimdLevel::V3> ARGS;                                    \
  }                                                                            \
  static void NAME##Baseline PARAMS {                                          \
    NAME##Body<::mgrt::SimdLevel::Baseline> ARGS;                              \
  }                                                                            \
  MGRT_SIMD_SELECT(NAME, PARAMS, ARGS)

constexpr int kLanes = 16;
typedef float VFloat __attribute__((vector_size(64)));
typedef int32_t VInt __attribute__((vector_size(64)));
typedef int8_t VByte __attribute__((vector_size(16)));

/// x in every lane (-0 becomes +0). GCC 12 turns other spellings, such as a
/// shuffle of {x}, into 16 masked lane inserts once inlined; this one is one
/// scalar add and one broadcast. The micro GEMM (intrinsics) needs no splat.
MGRT_INLINE VFloat splat(float x) { return VFloat{} + x; }

MGRT_INLINE VFloat load(const float *p) {
  VFloat v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

MGRT_INLINE void store(float *p, VFloat v) { std::memcpy(p, &v, sizeof v); }

/// Lanes of 16 bytes widened to int32 (for mask tests).
MGRT_INLINE VInt loadBytes(const int8_t *p) {
  VByte v;
  std::memcpy(&v, p, sizeof v);
  return __builtin_convertvector(v, VInt);
}

MGRT_INLINE VFloat vmax(VFloat a, VFloat b) { return a > b ? a : b; }

MGRT_INLINE float reduceMax(VFloat v) {
  float m = v[0];
  for (int i = 1; i < kLanes; ++i)
    m = v[i] > m ? v[i] : m;
  return m;
}

MGRT_INLINE float reduceSum(VFloat v) {
  float s = 0.f;
  for (int i = 0; i < kLanes; ++i)
    s += v[i];
  return s;
}

/// The reduction and polynomial of vexp: for x clamped below at -87.3,
/// exp(x) = p * 2^fn with fn integer-valued (returned in `fn`).
MGRT_INLINE VFloat vexpPolynomial(VFloat x, VFloat &fn) {
  const VFloat lo = splat(-87.3f);
  VFloat xc = x < lo ? lo : x;
  VFloat t = xc * 1.44269504088896341f;
  fn = (t + 12582912.f) - 12582912.f; // round to nearest integer
  VFloat r = xc - fn * 0.693359375f;
  r = r - fn * -2.12194440e-4f;
  VFloat p = splat(1.9875691500E-4f);
  p = p * r + 1.3981999507E-3f;
  p = p * r + 8.3334519073E-3f;
  p = p * r + 4.1665795894E-2f;
  p = p * r + 1.6666665459E-1f;
  p = p * r + 5.0000001201E-1f;
  p = p * (r * r) + r + 1.f;
  return p;
}

/// exp(x) for x <= ~88 with Cephes' expf polynomial (about 1 ulp); exactly 0
/// below -87.3 and for -inf, so masked scores contribute nothing.
MGRT_INLINE VFloat vexp(VFloat x) {
  VFloat fn;
  const VFloat p = vexpPolynomial(x, fn);
  VInt n = __builtin_convertvector(fn, VInt);
  VInt bits = (n + 127) << 23;
  VFloat scale;
  std::memcpy(&scale, &bits, sizeof scale);
  VFloat y = p * scale;
  return x < splat(-87.3f) ? splat(0.f) : y;
}

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

} // namespace mgrt

#endif // MEGAGRAPH_RUNTIME_KERNELS_VECTORMATH_H
