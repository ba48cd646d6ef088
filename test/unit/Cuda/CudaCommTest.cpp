//===- CudaCommTest.cpp - Multi-GPU calls of compiled code, one rank ------===//
//
// What a --target cuda program of a dp / cp / pp plan calls, on one GPU and
// one rank (a grid of 1, NCCL with one member): the device shard
// collectives (runtime/comm/DeviceShardCalls.cpp) on device buffers written
// by a kernel just before (so a collective that did not wait for the
// default stream would read stale data), and the context-parallel
// attention (runtime/cuda/CpAttention.cu, all-gather and ring) against the
// single-GPU attention calls. Skipped without a GPU; run with or without
// mpirun -np 1 (MPI is initialized on first use).
//
//===----------------------------------------------------------------------===//

#include "CudaTestUtil.h"
#include "RuntimeTestUtil.h"
#include "megagraph/Comm.h"
#include "megagraph/RuntimeCp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace mgrt_test;

extern "C" {
void _mlir_ciface_mgrt_cuda_attention_f32(
    mgrt_memref_f32_3 *out, mgrt_memref_f32_3 *q, mgrt_memref_f32_3 *k,
    mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias, mgrt_memref_i8_4 *mask,
    int64_t numHeads, float scale, int64_t flags);
void _mlir_ciface_mgrt_cuda_attention_bwd_f32(
    mgrt_memref_f32_3 *dq, mgrt_memref_f32_3 *dk, mgrt_memref_f32_3 *dv,
    mgrt_memref_f32_4 *dbias, mgrt_memref_f32_3 *dout, mgrt_memref_f32_3 *q,
    mgrt_memref_f32_3 *k, mgrt_memref_f32_3 *v, mgrt_memref_f32_4 *bias,
    mgrt_memref_i8_4 *mask, int64_t numHeads, float scale, int64_t flags);
}

namespace {

mgrt_memref_f32_1 vec(float *p, int64_t n) {
  return memref<mgrt_memref_f32_1>(p, {n});
}

/// Device data written on the default stream right before the collective:
/// the matmul of `x` by the identity (cuBLAS, asynchronous).
void writeOnStream(float *dst, const std::vector<float> &x) {
  const int64_t n = static_cast<int64_t>(x.size());
  DeviceBuffer<float> src(x), eye(std::vector<float>{1.f});
  mgrt_cuda_matmul(dst, src.get(), eye.get(), 1, n, 1, 1, 0, 0, 0,
                   MGRT_CUDA_MATH_FP32, nullptr);
}

TEST(CudaComm, DeviceShardCallsOnOneRank) {
  REQUIRE_GPU();
  const int64_t n = 1000;
  std::vector<float> x = randomFloats(n, 3);
  DeviceBuffer<float> a(n), b(n);
  mgrt_memref_f32_1 da = vec(a.get(), n), db = vec(b.get(), n);
  writeOnStream(a.get(), x);
  _mlir_ciface_mgrt_comm_device_all_reduce_f32(&da, 1, 1, 1, 1, 1,
                                               MGRT_COMM_SUM);
  EXPECT_EQ(maxAbsDiff(a.host(), x), 0.f) << "all_reduce";
  writeOnStream(a.get(), x);
  _mlir_ciface_mgrt_comm_device_all_gather_f32(&db, &da, 1, 1, 1, 1, 1);
  EXPECT_EQ(maxAbsDiff(b.host(), x), 0.f) << "all_gather";
  // Started and waited for (NCCL: the plain call on the group's stream).
  std::vector<float> y = randomFloats(n, 4);
  writeOnStream(a.get(), y);
  const int64_t request = _mlir_ciface_mgrt_comm_device_all_gather_start_f32(
      &db, &da, 1, 1, 1, 1, 1);
  _mlir_ciface_mgrt_comm_device_wait_f32(&db, &da, request);
  EXPECT_EQ(maxAbsDiff(b.host(), y), 0.f) << "all_gather started";
  writeOnStream(a.get(), x);
  _mlir_ciface_mgrt_comm_device_reduce_scatter_f32(&db, &da, 1, 1, 1, 1, 1,
                                                   MGRT_COMM_SUM);
  EXPECT_EQ(maxAbsDiff(b.host(), x), 0.f) << "reduce_scatter";
  writeOnStream(a.get(), x);
  _mlir_ciface_mgrt_comm_device_all_slice_f32(&db, &da, 1, 1, 1, 1, 1);
  EXPECT_EQ(maxAbsDiff(b.host(), x), 0.f) << "all_slice (a local copy)";
  writeOnStream(a.get(), x);
  _mlir_ciface_mgrt_comm_device_shift_f32(&db, &da, 1, 1, 1, 1, 1, 1, 0);
  EXPECT_EQ(maxAbsDiff(b.host(), x), 0.f) << "shift without a source";
  writeOnStream(a.get(), x);
  _mlir_ciface_mgrt_comm_device_shift_f32(&db, &da, 1, 1, 1, 1, 1, 1, 1);
  EXPECT_EQ(maxAbsDiff(b.host(), x), 0.f) << "shift around a ring of one";
  writeOnStream(a.get(), x);
  _mlir_ciface_mgrt_comm_device_broadcast_f32(&da, 1, 1, 1, 1, 1, 0);
  EXPECT_EQ(maxAbsDiff(a.host(), x), 0.f) << "broadcast";
}

/// The cp attention calls of a grid of one against the single-GPU calls,
/// both modes: bias over all keys, dbias, a q that is a column slice.
void checkCp(int64_t mode) {
  const int64_t B = 2, S = 50, H = 2, D = 32;
  std::vector<float> qkv0 = randomFloats(B * S * 2 * D, 41),
                     v0 = randomFloats(B * S * D, 42),
                     bias0 = randomFloats(B * H * S * S, 43, -2, 2),
                     dout0 = randomFloats(B * S * D, 44);
  DeviceBuffer<float> qkv(qkv0), v(v0), bias(bias0), dout(dout0);
  const float scale = 0.25f;
  const int64_t flags = MGRT_ATTENTION_BIAS | MGRT_ATTENTION_DBIAS;
  mgrt_memref_i8_4 noMask{};
  auto q =
      memref<mgrt_memref_f32_3>(qkv.get(), {B, S, D}, {S * 2 * D, 2 * D, 1});
  auto k =
      memref<mgrt_memref_f32_3>(qkv.get(), {B, S, D}, {S * 2 * D, 2 * D, 1}, D);
  auto vd = memref<mgrt_memref_f32_3>(v.get(), {B, S, D});
  auto bd = memref<mgrt_memref_f32_4>(bias.get(), {B, H, S, S});
  auto gd = memref<mgrt_memref_f32_3>(dout.get(), {B, S, D});
  std::vector<std::vector<float>> results[2];
  for (int cp = 0; cp < 2; ++cp) {
    DeviceBuffer<float> out(B * S * D), dq(B * S * D), dk(B * S * D),
        dv(B * S * D), dbias(B * H * S * S);
    auto od = memref<mgrt_memref_f32_3>(out.get(), {B, S, D});
    auto dqd = memref<mgrt_memref_f32_3>(dq.get(), {B, S, D});
    auto dkd = memref<mgrt_memref_f32_3>(dk.get(), {B, S, D});
    auto dvd = memref<mgrt_memref_f32_3>(dv.get(), {B, S, D});
    auto dbd = memref<mgrt_memref_f32_4>(dbias.get(), {B, H, S, S});
    if (cp) {
      _mlir_ciface_mgrt_cuda_cp_attention_f32(&od, &q, &k, &vd, &bd, &noMask, H,
                                              scale, MGRT_ATTENTION_BIAS, 1, 1,
                                              1, 1, 4, mode, /*seq=*/0);
      _mlir_ciface_mgrt_cuda_cp_attention_bwd_f32(
          &dqd, &dkd, &dvd, &dbd, &gd, &q, &k, &vd, &bd, &noMask, H, scale,
          flags, 1, 1, 1, 1, 4, mode, /*seq=*/0);
    } else {
      _mlir_ciface_mgrt_cuda_attention_f32(&od, &q, &k, &vd, &bd, &noMask, H,
                                           scale, MGRT_ATTENTION_BIAS);
      _mlir_ciface_mgrt_cuda_attention_bwd_f32(&dqd, &dkd, &dvd, &dbd, &gd, &q,
                                               &k, &vd, &bd, &noMask, H, scale,
                                               flags);
    }
    results[cp] = {out.host(), dq.host(), dk.host(), dv.host(), dbias.host()};
  }
  const char *names[] = {"out", "dq", "dk", "dv", "dbias"};
  for (int i = 0; i < 5; ++i)
    EXPECT_LE(maxAbsDiff(results[1][i], results[0][i]), 1e-4f)
        << names[i] << ", mode " << mode;
}

TEST(CudaComm, CpAttentionAllGatherOnOneRank) {
  REQUIRE_GPU();
  checkCp(MGRT_CP_ALLGATHER);
}

TEST(CudaComm, CpAttentionRingOnOneRank) {
  REQUIRE_GPU();
  checkCp(MGRT_CP_RING);
}

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  if (mgrt_comm_initialized())
    mgrt_comm_finalize();
  return rc;
}
