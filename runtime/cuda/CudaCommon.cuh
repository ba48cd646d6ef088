//===- CudaCommon.cuh - Shared helpers of the CUDA runtime ------*- CUDA
//-*-===//
//
// Internal to runtime/cuda: error checks (support/Error.h), bfloat16
// conversions and launch helpers.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_RUNTIME_CUDA_CUDACOMMON_CUH
#define MEGAGRAPH_RUNTIME_CUDA_CUDACOMMON_CUH

#include "megagraph/RuntimeCuda.h"

#include "support/Error.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace mgrt {
namespace cuda {

/// Contract violations and CUDA errors alike go through kernelFail:
/// "megagraph runtime: KERNEL: MESSAGE", then abort.
inline void check(cudaError_t e, const char *kernel, const char *what) {
  if (e != cudaSuccess)
    kernelFail(kernel, "%s: %s", what, cudaGetErrorString(e));
}

inline cudaStream_t asStream(void *s) { return static_cast<cudaStream_t>(s); }

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Blocks of 256 threads for a grid-stride loop over n elements.
inline int gridFor(int64_t n) {
  const int64_t blocks = ceilDiv(n, 256);
  return (int)(blocks < 1 ? 1 : blocks > 65535 ? 65535 : blocks);
}

// Element access of float / bfloat16 data with float32 arithmetic.
__device__ __forceinline__ float toF32(float x) { return x; }
__device__ __forceinline__ float toF32(__nv_bfloat16 x) {
  return __bfloat162float(x);
}
template <typename T> __device__ __forceinline__ T fromF32(float x);
template <> __device__ __forceinline__ float fromF32<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __nv_bfloat16 fromF32<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

} // namespace cuda
} // namespace mgrt

#define MGRT_CUDA_CHECK(cond, kernel, ...)                                     \
  do {                                                                         \
    if (!(cond))                                                               \
      ::mgrt::kernelFail(kernel, __VA_ARGS__);                                 \
  } while (0)

#define MGRT_CUDA_LAUNCHED(kernel)                                             \
  ::mgrt::cuda::check(cudaGetLastError(), kernel, "launch")

#endif // MEGAGRAPH_RUNTIME_CUDA_CUDACOMMON_CUH
