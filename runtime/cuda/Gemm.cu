//===- Gemm.cu - Batched GEMM through cuBLAS ------------------------------===//
//
// Row-major out = op(a) @ op(b) is computed as the column-major
// out^T = op(b)^T op(a)^T, so no operand is ever transposed in memory.
// One cuBLAS handle per process, created on first use; FP32 by default,
// TF32 or BF16 tensor cores only when asked for.
//
//===----------------------------------------------------------------------===//

#include "CudaCommon.cuh"

#include <cublas_v2.h>

#include <mutex>

namespace {
constexpr const char *kName = "mgrt_cuda_matmul";

cublasHandle_t handle() {
  static cublasHandle_t h = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    cublasStatus_t st = cublasCreate(&h);
    MGRT_CUDA_CHECK(st == CUBLAS_STATUS_SUCCESS, kName,
                    "cublasCreate failed (status %d)", (int)st);
  });
  return h;
}
} // namespace

extern "C" void mgrt_cuda_matmul(void *out, const void *a, const void *b,
                                 int64_t G, int64_t M, int64_t N, int64_t K,
                                 int transA, int transB, int64_t bBatchStride,
                                 int math, void *stream) {
  MGRT_CUDA_CHECK(out && a && b, kName, "null operand");
  MGRT_CUDA_CHECK(G > 0 && M > 0 && N > 0 && K > 0, kName,
                  "empty GEMM G=%lld M=%lld N=%lld K=%lld", (long long)G,
                  (long long)M, (long long)N, (long long)K);
  MGRT_CUDA_CHECK(M <= INT32_MAX && N <= INT32_MAX && K <= INT32_MAX &&
                      G <= INT32_MAX,
                  kName, "dimension beyond 2^31");
  cudaDataType_t type = CUDA_R_32F, outType = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  switch (math) {
  case MGRT_CUDA_MATH_FP32:
    compute = CUBLAS_COMPUTE_32F_PEDANTIC;
    break;
  case MGRT_CUDA_MATH_TF32:
    compute = CUBLAS_COMPUTE_32F_FAST_TF32;
    break;
  case MGRT_CUDA_MATH_BF16:
    type = outType = CUDA_R_16BF;
    break;
  case MGRT_CUDA_MATH_BF16_F32:
    type = CUDA_R_16BF;
    break;
  default:
    mgrt::kernelFail(kName, "unknown math mode %d", math);
  }
  cublasHandle_t h = handle();
  cublasSetStream(h, mgrt::cuda::asStream(stream));
  const float alpha = 1.f, beta = 0.f;
  const cublasOperation_t opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int64_t ldb = transB ? K : N, lda = transA ? M : K;
  cublasStatus_t st = cublasGemmStridedBatchedEx(
      h, opB, opA, (int)N, (int)M, (int)K, &alpha, b, type, (int)ldb,
      bBatchStride, a, type, (int)lda, M * K, &beta, out, outType, (int)N,
      M * N, (int)G, compute, CUBLAS_GEMM_DEFAULT);
  MGRT_CUDA_CHECK(st == CUBLAS_STATUS_SUCCESS, kName,
                  "cublasGemmStridedBatchedEx failed (status %d)", (int)st);
}
