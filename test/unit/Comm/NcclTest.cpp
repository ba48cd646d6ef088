//===- NcclTest.cpp - NCCL backend of the communication runtime ----------===//
//
// Every collective of megagraph/Comm.h on device buffers through an NCCL
// group bootstrapped over MPI. Runs with any number of ranks (one GPU is
// enough: `MegaGraphCommNcclTests` alone, or mpirun -np P with P GPUs).
// Without a CUDA device the binary prints why and exits 77, which CTest
// reports as skipped (SKIP_RETURN_CODE).
//
//===----------------------------------------------------------------------===//

#include "megagraph/Comm.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

namespace {

mgrt_comm_group *gNccl = nullptr;
int me() { return mgrt_comm_rank(gNccl); }
int np() { return mgrt_comm_size(gNccl); }
float value(int rank, int64_t i) {
  return static_cast<float>(rank * 100 + (i % 13) - 6);
}

/// A device copy of `host`; freed by the destructor.
struct DeviceBuffer {
  void *p = nullptr;
  size_t bytes;
  explicit DeviceBuffer(size_t n) : bytes(n) {
    EXPECT_EQ(cudaMalloc(&p, n ? n : 1), cudaSuccess);
    cudaMemset(p, 0xff, n ? n : 1);
  }
  template <typename T>
  explicit DeviceBuffer(const std::vector<T> &host)
      : DeviceBuffer(host.size() * sizeof(T)) {
    cudaMemcpy(p, host.data(), bytes, cudaMemcpyHostToDevice);
  }
  template <typename T> std::vector<T> get() const {
    std::vector<T> out(bytes / sizeof(T));
    cudaMemcpy(out.data(), p, bytes, cudaMemcpyDeviceToHost);
    return out;
  }
  ~DeviceBuffer() { cudaFree(p); }
};

TEST(Nccl, Group) {
  EXPECT_EQ(mgrt_comm_backend_of(gNccl), MGRT_COMM_NCCL);
  EXPECT_EQ(np(), mgrt_comm_size(mgrt_comm_world()));
  EXPECT_EQ(mgrt_comm_barrier(gNccl), MGRT_OK);
}

TEST(Nccl, AllReduceEveryOp) {
  for (int op : {MGRT_COMM_SUM, MGRT_COMM_AVG, MGRT_COMM_MAX, MGRT_COMM_MIN})
    for (bool inPlace : {false, true}) {
      std::vector<float> h(1000);
      for (int i = 0; i < 1000; ++i)
        h[i] = value(me(), i);
      DeviceBuffer s(h), r(h.size() * sizeof(float));
      void *out = inPlace ? s.p : r.p;
      ASSERT_EQ(mgrt_comm_all_reduce(gNccl, s.p, out, 1000, MGRT_F32, op),
                MGRT_OK);
      std::vector<float> got = inPlace ? s.get<float>() : r.get<float>();
      for (int i = 0; i < 1000; ++i) {
        float sum = 0, mx = -1e30f, mn = 1e30f;
        for (int k = 0; k < np(); ++k) {
          sum += value(k, i);
          mx = std::max(mx, value(k, i));
          mn = std::min(mn, value(k, i));
        }
        float want = op == MGRT_COMM_SUM   ? sum
                     : op == MGRT_COMM_AVG ? sum / np()
                     : op == MGRT_COMM_MAX ? mx
                                           : mn;
        ASSERT_FLOAT_EQ(got[i], want) << "op " << op << " i " << i;
      }
    }
}

TEST(Nccl, AllGatherUniformAndUneven) {
  for (bool uniform : {true, false}) {
    std::vector<int64_t> counts(np());
    for (int r = 0; r < np(); ++r)
      counts[r] = uniform ? 5 : r + 2;
    int64_t total = std::accumulate(counts.begin(), counts.end(), 0L);
    std::vector<float> h(counts[me()]);
    for (int64_t i = 0; i < counts[me()]; ++i)
      h[i] = value(me(), i);
    DeviceBuffer s(h), r(total * sizeof(float));
    ASSERT_EQ(mgrt_comm_all_gather(gNccl, s.p, counts[me()], r.p,
                                   uniform ? nullptr : counts.data(), MGRT_F32),
              MGRT_OK);
    std::vector<float> got = r.get<float>();
    int64_t k = 0;
    for (int q = 0; q < np(); ++q)
      for (int64_t i = 0; i < counts[q]; ++i, ++k)
        ASSERT_EQ(got[k], value(q, i)) << "uniform " << uniform;
  }
}

TEST(Nccl, ReduceScatterUniformAndUneven) {
  for (bool uniform : {true, false}) {
    std::vector<int64_t> counts(np());
    for (int r = 0; r < np(); ++r)
      counts[r] = uniform ? 4 : r + 3;
    int64_t total = std::accumulate(counts.begin(), counts.end(), 0L);
    std::vector<float> h(total);
    for (int64_t i = 0; i < total; ++i)
      h[i] = value(me(), i);
    DeviceBuffer s(h), r(counts[me()] * sizeof(float));
    ASSERT_EQ(mgrt_comm_reduce_scatter(gNccl, s.p, r.p, 4,
                                       uniform ? nullptr : counts.data(),
                                       MGRT_F32, MGRT_COMM_SUM),
              MGRT_OK);
    std::vector<float> got = r.get<float>();
    int64_t off = 0;
    for (int q = 0; q < me(); ++q)
      off += counts[q];
    for (int64_t i = 0; i < counts[me()]; ++i) {
      float sum = 0;
      for (int q = 0; q < np(); ++q)
        sum += value(q, off + i);
      ASSERT_FLOAT_EQ(got[i], sum) << "uniform " << uniform;
    }
  }
}

TEST(Nccl, AllToAllUniformAndUneven) {
  for (bool uniform : {true, false}) {
    std::vector<int64_t> sc(np()), rc(np());
    for (int r = 0; r < np(); ++r) {
      sc[r] = uniform ? 3 : (me() + 2 * r) % 3 + 1;
      rc[r] = uniform ? 3 : (r + 2 * me()) % 3 + 1;
    }
    std::vector<float> h;
    for (int j = 0; j < np(); ++j)
      for (int64_t k = 0; k < sc[j]; ++k)
        h.push_back(static_cast<float>(me() * 1000 + j * 10 + k));
    DeviceBuffer s(h),
        r(std::accumulate(rc.begin(), rc.end(), 0L) * sizeof(float));
    ASSERT_EQ(mgrt_comm_all_to_all(gNccl, s.p, uniform ? nullptr : sc.data(),
                                   r.p, uniform ? nullptr : rc.data(), 3,
                                   MGRT_F32),
              MGRT_OK);
    std::vector<float> got = r.get<float>();
    int64_t pos = 0;
    for (int i = 0; i < np(); ++i)
      for (int64_t k = 0; k < rc[i]; ++k, ++pos)
        ASSERT_EQ(got[pos], static_cast<float>(i * 1000 + me() * 10 + k));
  }
}

TEST(Nccl, Broadcast) {
  for (int root = 0; root < np(); ++root) {
    std::vector<float> h(33, -1.f);
    if (me() == root)
      for (int i = 0; i < 33; ++i)
        h[i] = value(root, i);
    DeviceBuffer b(h);
    ASSERT_EQ(mgrt_comm_broadcast(gNccl, b.p, 33, MGRT_F32, root), MGRT_OK);
    std::vector<float> got = b.get<float>();
    for (int i = 0; i < 33; ++i)
      ASSERT_EQ(got[i], value(root, i));
  }
}

TEST(Nccl, SendRecvRing) {
  // One rank sends to itself; with more, a ring in one grouped call.
  const int next = (me() + 1) % np(), prev = (me() + np() - 1) % np();
  std::vector<float> h(7);
  for (int i = 0; i < 7; ++i)
    h[i] = value(me(), i);
  DeviceBuffer s(h), r(7 * sizeof(float));
  ASSERT_EQ(mgrt_comm_sendrecv(gNccl, s.p, 7, next, r.p, 7, prev, MGRT_F32, 0),
            MGRT_OK);
  std::vector<float> got = r.get<float>();
  for (int i = 0; i < 7; ++i)
    ASSERT_EQ(got[i], value(prev, i));
  if (np() > 1) {
    // Plain send/recv pair between ranks 0 and 1.
    if (me() == 0) {
      ASSERT_EQ(mgrt_comm_send(gNccl, s.p, 7, MGRT_F32, 1, 0), MGRT_OK);
    }
    if (me() == 1) {
      ASSERT_EQ(mgrt_comm_recv(gNccl, r.p, 7, MGRT_F32, 0, 0), MGRT_OK);
      EXPECT_EQ(r.get<float>()[3], value(0, 3));
    }
  }
}

TEST(Nccl, HostBufferIsAnError) {
  const int prev = mgrt_comm_set_error_mode(MGRT_COMM_ERRORS_RETURN);
  std::vector<float> host(4, 1.f);
  EXPECT_EQ(mgrt_comm_all_reduce(gNccl, host.data(), host.data(), 4, MGRT_F32,
                                 MGRT_COMM_SUM),
            MGRT_ERR_ARGUMENT);
  EXPECT_NE(std::string(mgrt_comm_last_error()).find("device buffers"),
            std::string::npos)
      << mgrt_comm_last_error();
  mgrt_comm_set_error_mode(prev);
}

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  int devices = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA device (%s); the NCCL backend tests need "
                "a GPU\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return 77;
  }
  if (mgrt_comm_init(&argc, &argv) != MGRT_OK)
    return 1;
  if (mgrt_comm_nccl_group_create(mgrt_comm_world(), -1, &gNccl) != MGRT_OK)
    return 1;
  std::printf("NCCL group: rank %d of %d\n", me(), np());
  const int rc = RUN_ALL_TESTS();
  int all = rc;
  mgrt_comm_all_reduce(mgrt_comm_world(), &rc, &all, 1, MGRT_I32,
                       MGRT_COMM_MAX);
  mgrt_comm_group_free(gNccl);
  mgrt_comm_finalize();
  return all;
}
