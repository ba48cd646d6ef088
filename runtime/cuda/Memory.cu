//===- Memory.cu - Device memory with peak tracking -----------------------===//
//
// Plain cudaMalloc/cudaFree (never managed memory) with the byte counts the
// training driver reports per device. The size of each live block is kept
// in a map under a mutex: allocations are few and large (tensors), so the
// lock is never hot.
//
//===----------------------------------------------------------------------===//

#include "CudaCommon.cuh"

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unordered_map>

namespace mgrt {
namespace cuda {

namespace {
struct Accounting {
  std::mutex lock;
  std::unordered_map<void *, size_t> sizes;
  size_t current = 0, peak = 0;
};
Accounting &accounting() {
  static Accounting a;
  return a;
}

__global__ void toBf16Kernel(__nv_bfloat16 *dst, const float *src, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    dst[i] = __float2bfloat16_rn(src[i]);
}
__global__ void toF32Kernel(float *dst, const __nv_bfloat16 *src, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    dst[i] = __bfloat162float(src[i]);
}
} // namespace

} // namespace cuda
} // namespace mgrt

using namespace mgrt::cuda;

extern "C" int mgrt_cuda_device_count(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError(); // no driver / no device: not an error here
    return 0;
  }
  return n;
}

extern "C" const char *mgrt_cuda_device_name(void) {
  static char name[256] = "none";
  cudaDeviceProp prop;
  if (mgrt_cuda_device_count() > 0 &&
      cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
    std::snprintf(name, sizeof(name), "%s", prop.name);
  return name;
}

extern "C" void *mgrt_cuda_alloc(size_t bytes) {
  void *p = nullptr;
  cudaError_t e = cudaMalloc(&p, std::max<size_t>(bytes, 1));
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    Accounting &a = accounting();
    std::lock_guard<std::mutex> guard(a.lock);
    std::fprintf(stderr,
                 "megagraph runtime: mgrt_cuda_alloc: %zu bytes: %s (%zu "
                 "bytes in use, peak %zu)\n",
                 bytes, cudaGetErrorString(e), a.current, a.peak);
    return nullptr;
  }
  Accounting &a = accounting();
  std::lock_guard<std::mutex> guard(a.lock);
  a.sizes[p] = bytes;
  a.current += bytes;
  a.peak = std::max(a.peak, a.current);
  return p;
}

extern "C" void mgrt_cuda_free(void *p) {
  if (!p)
    return;
  Accounting &a = accounting();
  {
    std::lock_guard<std::mutex> guard(a.lock);
    auto it = a.sizes.find(p);
    MGRT_CUDA_CHECK(it != a.sizes.end(), "mgrt_cuda_free",
                    "%p was not allocated by mgrt_cuda_alloc", p);
    a.current -= it->second;
    a.sizes.erase(it);
  }
  check(cudaFree(p), "mgrt_cuda_free", "cudaFree");
}

extern "C" size_t mgrt_cuda_current_bytes(void) {
  Accounting &a = accounting();
  std::lock_guard<std::mutex> guard(a.lock);
  return a.current;
}

extern "C" size_t mgrt_cuda_peak_bytes(void) {
  Accounting &a = accounting();
  std::lock_guard<std::mutex> guard(a.lock);
  return a.peak;
}

extern "C" void mgrt_cuda_reset_peak(void) {
  Accounting &a = accounting();
  std::lock_guard<std::mutex> guard(a.lock);
  a.peak = a.current;
}

extern "C" void mgrt_cuda_copy_to_device(void *dst, const void *src,
                                         size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice),
        "mgrt_cuda_copy_to_device", "cudaMemcpy");
}

extern "C" void mgrt_cuda_copy_to_host(void *dst, const void *src,
                                       size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost),
        "mgrt_cuda_copy_to_host", "cudaMemcpy");
}

extern "C" void mgrt_cuda_synchronize(void) {
  check(cudaDeviceSynchronize(), "mgrt_cuda_synchronize",
        "cudaDeviceSynchronize");
}

extern "C" void mgrt_cuda_f32_to_bf16(void *dst, const float *src, int64_t n,
                                      void *stream) {
  if (n <= 0)
    return;
  toBf16Kernel<<<gridFor(n), 256, 0, asStream(stream)>>>(
      static_cast<__nv_bfloat16 *>(dst), src, n);
  MGRT_CUDA_LAUNCHED("mgrt_cuda_f32_to_bf16");
}

extern "C" void mgrt_cuda_bf16_to_f32(float *dst, const void *src, int64_t n,
                                      void *stream) {
  if (n <= 0)
    return;
  toF32Kernel<<<gridFor(n), 256, 0, asStream(stream)>>>(
      dst, static_cast<const __nv_bfloat16 *>(src), n);
  MGRT_CUDA_LAUNCHED("mgrt_cuda_bf16_to_f32");
}
