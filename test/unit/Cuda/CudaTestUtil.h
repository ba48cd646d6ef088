//===- CudaTestUtil.h - Helpers of the GPU unit tests ------------*- C++
//-*-===//
//
// Skipping without a GPU and device copies of host vectors, shared by the
// kernel tests and the --target cuda step-call tests.
//
//===----------------------------------------------------------------------===//

#ifndef MEGAGRAPH_TEST_UNIT_CUDA_CUDATESTUTIL_H
#define MEGAGRAPH_TEST_UNIT_CUDA_CUDATESTUTIL_H

#include "megagraph/RuntimeCuda.h"

#include <gtest/gtest.h>

#include <vector>

namespace mgrt_test {

#define REQUIRE_GPU()                                                          \
  do {                                                                         \
    if (mgrt_cuda_device_count() == 0)                                         \
      GTEST_SKIP() << "no CUDA device: GPU test skipped";                      \
  } while (0)

/// A device copy of a host vector (freed with the object).
template <typename T> struct DeviceBuffer {
  void *ptr = nullptr;
  size_t bytes = 0;
  explicit DeviceBuffer(size_t n) : bytes(n * sizeof(T)) {
    ptr = mgrt_cuda_alloc(bytes);
    EXPECT_NE(ptr, nullptr);
  }
  explicit DeviceBuffer(const std::vector<T> &host)
      : DeviceBuffer(host.size()) {
    mgrt_cuda_copy_to_device(ptr, host.data(), bytes);
  }
  ~DeviceBuffer() { mgrt_cuda_free(ptr); }
  std::vector<T> host() const {
    std::vector<T> h(bytes / sizeof(T));
    mgrt_cuda_synchronize();
    mgrt_cuda_copy_to_host(h.data(), ptr, bytes);
    return h;
  }
  T *get() const { return static_cast<T *>(ptr); }
};

} // namespace mgrt_test

#endif // MEGAGRAPH_TEST_UNIT_CUDA_CUDATESTUTIL_H
